// The extension as the Marketplace and a first-time user meet it, checked without VS Code: the
// manifest's icon, walkthrough images, settings and task type, and how a project is found in a
// workspace (a subfolder, several folders).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { locateProject } from '../../src/extension/model/projectLocator.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

test('the Marketplace icon is a 128 px PNG and the listing fields are set', () => {
  const png = readFileSync(join(root, pkg.icon));
  assert.equal(png.subarray(1, 4).toString(), 'PNG');
  assert.equal(png.readUInt32BE(16), 128);
  assert.equal(png.readUInt32BE(20), 128);
  assert.ok(pkg.keywords.length >= 5 && pkg.keywords.length <= 30, 'the Marketplace allows at most 30 keywords');
  assert.equal(pkg.preview, true);
  assert.match(pkg.galleryBanner.color, /^#[0-9a-f]{6}$/i);
  const vscodeignore = readFileSync(join(root, '.vscodeignore'), 'utf8');
  assert.match(vscodeignore, /^!resources\/\*\*$/m, 'the icon is packaged');
});

test('every walkthrough step shows an image that exists and is packaged; every setting has a markdownDescription', () => {
  const vscodeignore = readFileSync(join(root, '.vscodeignore'), 'utf8');
  for (const w of pkg.contributes.walkthroughs) {
    for (const s of w.steps) {
      assert.ok(s.media.image && s.media.altText, `${s.id}: no image`);
      assert.ok(existsSync(join(root, s.media.image)), `${s.id}: ${s.media.image} is missing`);
      assert.ok(vscodeignore.includes(`!${s.media.image.replace(/[^/]+\.png$/, '*.png')}`), `${s.id}: ${s.media.image} is not packaged`);
    }
  }
  for (const [k, p] of Object.entries(pkg.contributes.configuration.properties) as [string, Record<string, unknown>][]) {
    assert.equal(typeof p.markdownDescription, 'string', `${k}: no markdownDescription`);
    assert.equal(p.description, undefined, `${k}: description and markdownDescription both set`);
  }
});

test('the whale task type declares run, step and eval', () => {
  const [def] = pkg.contributes.taskDefinitions;
  assert.equal(def.type, 'whale');
  assert.deepEqual(def.properties.command.enum, ['run', 'step', 'eval']);
  assert.deepEqual(def.required, ['command']);
  const src = readFileSync(join(root, 'src/extension/tasks.ts'), 'utf8');
  assert.match(src, /const COMMANDS = \['run', 'step', 'eval'\] as const/);
});

test("a project in a subfolder is found; with several, the first folder's wins and the others are named", () => {
  const ws = mkdtempSync(join(tmpdir(), 'whale-ws-'));
  const a = join(ws, 'a');
  const b = join(ws, 'b');
  mkdirSync(join(a, 'ml', 'agent'), { recursive: true });
  mkdirSync(join(a, 'node_modules', 'x'), { recursive: true });
  mkdirSync(join(a, '.hidden'), { recursive: true });
  mkdirSync(b, { recursive: true });
  writeFileSync(join(a, 'node_modules', 'x', 'whale.config.json'), '{}');
  writeFileSync(join(a, '.hidden', 'whale.config.json'), '{}');
  assert.deepEqual(locateProject([a]), { configFile: undefined, others: [] }, 'node_modules and dot-folders are not searched');
  writeFileSync(join(a, 'ml', 'agent', 'whale.config.json'), '{}');
  assert.deepEqual(locateProject([a]), { configFile: join(a, 'ml', 'agent', 'whale.config.json'), others: [] });
  assert.equal(locateProject([a], 1).configFile, undefined, 'deeper than the search depth');
  writeFileSync(join(b, 'whale.config.json'), '{}');
  assert.deepEqual(locateProject([b, a]), { configFile: join(b, 'whale.config.json'), others: [join(a, 'ml', 'agent', 'whale.config.json')] });
  mkdirSync(join(b, 'harnesses', 'h0'), { recursive: true });
  writeFileSync(join(b, 'harnesses', 'h0', 'whale.config.json'), '{}');
  assert.deepEqual(locateProject([b]).others, [], "a project's own subfolders are not searched");
});

// `whale report` end to end on synthetic runs written into a temporary run store: the CLI command,
// the files it writes, and the images decoded back (valid PNG, not blank, text actually drawn).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { main } from '../../src/cli/main.js';
import { chartFontFiles, renderChart } from '../../src/report/charts.js';
import { writeReport } from '../../src/report/report.js';
import { simulateRun, syntheticGrid, writeRuns } from './report-fixtures.js';

const root = mkdtempSync(join(tmpdir(), 'whale-report-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** A minimal PNG decoder (8-bit RGB/RGBA, non-interlaced: what resvg writes) → RGBA pixels. */
function decodePng(buf: Buffer): { width: number; height: number; rgba: Uint8Array } {
  assert.deepEqual([...buf.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], 'PNG signature');
  let off = 8;
  let width = 0;
  let height = 0;
  let colorType = 0;
  const idat: Buffer[] = [];
  let sawEnd = false;
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString('latin1', off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      assert.equal(data[8], 8, 'bit depth 8');
      colorType = data[9];
      assert.ok(colorType === 6 || colorType === 2, `colour type ${colorType}`);
      assert.equal(data[12], 0, 'not interlaced');
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') sawEnd = true;
    off += 12 + len;
  }
  assert.ok(sawEnd, 'IEND chunk');
  const bpp = colorType === 6 ? 4 : 3;
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * bpp;
  assert.equal(raw.length, height * (stride + 1), 'decompressed size');
  const px = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    for (let x = 0; x < stride; x++) {
      const v = raw[y * (stride + 1) + 1 + x];
      const a = x >= bpp ? px[y * stride + x - bpp] : 0;
      const b = y > 0 ? px[(y - 1) * stride + x] : 0;
      const c = x >= bpp && y > 0 ? px[(y - 1) * stride + x - bpp] : 0;
      let p: number;
      if (filter === 0) p = 0;
      else if (filter === 1) p = a;
      else if (filter === 2) p = b;
      else if (filter === 3) p = (a + b) >> 1;
      else if (filter === 4) {
        const q = a + b - c;
        const pa = Math.abs(q - a);
        const pb = Math.abs(q - b);
        const pc = Math.abs(q - c);
        p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      } else throw new Error(`bad filter ${filter}`);
      px[y * stride + x] = (v + p) & 0xff;
    }
  }
  const rgba = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    rgba[4 * i] = px[bpp * i];
    rgba[4 * i + 1] = px[bpp * i + 1];
    rgba[4 * i + 2] = px[bpp * i + 2];
    rgba[4 * i + 3] = bpp === 4 ? px[bpp * i + 3] : 255;
  }
  return { width, height, rgba };
}

/** Fraction of pixels that are not (near) white, and the number of distinct colours. */
function ink(img: { width: number; height: number; rgba: Uint8Array }): { fraction: number; colours: number } {
  let dark = 0;
  const colours = new Set<number>();
  for (let i = 0; i < img.width * img.height; i++) {
    const [r, g, b] = [img.rgba[4 * i], img.rgba[4 * i + 1], img.rgba[4 * i + 2]];
    if (r < 235 || g < 235 || b < 235) dark++;
    colours.add((r << 16) | (g << 8) | b);
  }
  return { fraction: dark / (img.width * img.height), colours: colours.size };
}

function captureConsole<T>(fn: () => Promise<T>): Promise<{ value: T; out: string; err: string }> {
  const log = console.log;
  const error = console.error;
  let out = '';
  let err = '';
  console.log = (...a: unknown[]) => void (out += a.join(' ') + '\n');
  console.error = (...a: unknown[]) => void (err += a.join(' ') + '\n');
  return fn()
    .then((value) => ({ value, out, err }))
    .finally(() => {
      console.log = log;
      console.error = error;
    });
}

test('the chart font ships in an npm package and its glyphs are drawn', async () => {
  const fonts = chartFontFiles();
  assert.equal(fonts.length, 2, 'DejaVu Sans regular and bold from dejavu-fonts-ttf');
  for (const f of fonts) assert.ok(existsSync(f), f);
  // A chart with nothing but text: if no font were found, resvg would draw nothing at all.
  const r = await renderChart({
    width: 200,
    height: 60,
    data: { values: [{ t: 'WHALE mean@8 0123456789' }] },
    mark: { type: 'text', fontSize: 20 },
    encoding: { text: { field: 't' } },
    config: { view: { stroke: null } },
  });
  assert.match(r.svg, /<text[^>]*>WHALE mean@8 0123456789<\/text>/);
  const img = decodePng(r.png);
  assert.equal(img.width, r.width);
  const { fraction } = ink(img);
  assert.ok(fraction > 0.01, `text pixels drawn: ${fraction}`);
});

test('whale report renders a Markdown report with PNG and SVG curves from synthetic runs', async () => {
  const store = join(root, 'store');
  const runs = [...syntheticGrid(2), simulateRun({ method: 'whale', domain: 'kbqa', seed: 7, unfinished: true })];
  writeRuns(store, runs);
  mkdirSync(join(store, 'runs', 'not-started'), { recursive: true });
  writeRuns(store, [{ id: 'not-started', entries: [{ type: 'session_started', at: '2026-11-01T00:00:00Z' }], config: {} }]);

  const { value: code, out, err } = await captureConsole(() => main(['report', '--store', store]));
  assert.equal(code, 0, err);
  const file = out.trim();
  assert.match(file, /reports[/\\]\d{8}-\d{6}[/\\]report\.md$/);
  assert.ok(file.startsWith(join(store, 'reports')));
  assert.match(err, /skipped not-started/);
  const dir = join(file, '..');
  const md = readFileSync(file, 'utf8');
  for (const d of ['kbqa', 'ramble']) {
    assert.match(md, new RegExp(`!\\[${d}: best-so-far validation curves\\]\\(curves-${d}\\.png\\)`));
    const png = readFileSync(join(dir, `curves-${d}.png`));
    const img = decodePng(png);
    assert.ok(img.width >= 1000 && img.height >= 500, `${img.width}×${img.height}`);
    const { fraction, colours } = ink(img);
    assert.ok(fraction > 0.05 && fraction < 0.9, `ink ${fraction}`);
    assert.ok(colours > 50, `${colours} colours`);
    const svg = readFileSync(join(dir, `curves-${d}.svg`), 'utf8');
    assert.match(svg, /^<svg/);
    for (const m of ['whale', 'adaptive', 'stagewise', 'weight-only', 'harness-only', 'fst']) assert.match(svg, new RegExp(`>${m}</text>`));
    assert.match(svg, /weight-only peak/);
  }
  // one training chart per run with weight steps; none for harness-only runs
  const pngs = readdirSync(dir).filter((f) => f.startsWith('training-') && f.endsWith('.png'));
  assert.equal(pngs.length, runs.filter((r) => r.entries.some((e) => e.type === 'weight_step')).length);
  assert.ok(!pngs.some((f) => f.includes('harness-only')));
  for (const f of pngs) {
    assert.ok(statSync(join(dir, f)).size > 10_000, f);
    assert.ok(existsSync(join(dir, f.replace(/\.png$/, '.svg'))));
  }
  assert.ok(ink(decodePng(readFileSync(join(dir, pngs[0])))).fraction > 0.03);
  // the table: 12 rows (2 domains × 6 methods), the unfinished run left out of its row but listed
  const tableRows = md.split('\n').filter((l) => /^\| (kbqa|ramble) \| /.test(l));
  assert.equal(tableRows.length, 12);
  assert.match(md, /\| kbqa \| equal-total \| whale \| 4 steps ×3 · I 4 ×3 \| 2 \(\+1 unfinished, not counted\) \|/);
  assert.match(md, /stop requested \(resumable\)/);
  assert.match(md, /`not-started`: not started/);
  const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as { rows: { method: string; domain: string }[] };
  assert.equal(summary.rows.length, 12);
});

test('whale report --run ID --run ID --format html --out DIR: only those runs, an HTML page with its images', async () => {
  const store = join(root, 'store2');
  const runs = [
    simulateRun({ method: 'weight-only', domain: 'ramble', seed: 0 }),
    simulateRun({ method: 'whale', domain: 'ramble', seed: 0, acceptance: 'paired' }),
    simulateRun({ method: 'fst', domain: 'ramble', seed: 0 }),
  ];
  writeRuns(store, runs);
  const out = join(root, 'out-html');
  const { value: code, err } = await captureConsole(() =>
    main(['report', '--store', store, '--run', runs[0].id, '--run', runs[1].id, '--format', 'html', '--out', out]),
  );
  assert.equal(code, 0, err);
  const html = readFileSync(join(out, 'report.html'), 'utf8');
  assert.match(html, /^<!doctype html>/);
  assert.match(html, /<img src="curves-ramble\.svg"/);
  assert.ok(html.includes(runs[0].id) && html.includes(runs[1].id));
  assert.ok(!html.includes(runs[2].id));
  for (const f of ['curves-ramble.png', 'curves-ramble.svg', `training-${runs[0].id}.png`, `training-${runs[1].id}.svg`])
    assert.ok(existsSync(join(out, f)), f);
});

test('whale report: bad input and an empty store', async () => {
  const store = join(root, 'empty');
  let r = await captureConsole(() => main(['report', '--store', store, '--format', 'pdf']));
  assert.equal(r.value, 2);
  r = await captureConsole(() => main(['report', '--store', store, '--run', 'nope']));
  assert.equal(r.value, 1);
  assert.match(r.err, /no run 'nope'/);
  r = await captureConsole(() => main(['report', '--store', store, '--all', '--run', 'x']));
  assert.equal(r.value, 2);
  const res = await writeReport({ storeDir: store, now: new Date('2026-11-01T00:00:00Z') });
  assert.equal(res.runs, 0);
  assert.match(readFileSync(res.file, 'utf8'), /No runs to report\./);
  assert.match(res.dir, /reports[/\\]20261101-000000$/);
  // a second report in the same second gets its own folder
  const again = await writeReport({ storeDir: store, now: new Date('2026-11-01T00:00:00Z') });
  assert.match(again.dir, /20261101-000000-2$/);
});

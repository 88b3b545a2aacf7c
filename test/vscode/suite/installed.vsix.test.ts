// Runs against the extension INSTALLED from the .vsix (`npm run package`; the runner's
// --installed-vsix session), not the development folder: the package alone must carry a working
// engine — bundled dependencies, tfjs's .wasm, esbuild's and resvg's native binaries.
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite, test } from 'mocha';
import * as vscode from 'vscode';
import { activated, eventually, projectFolder, whaleExtension } from './helpers.js';

suite('installed .vsix', () => {
  test('the extension is the installed package, not a development folder', async () => {
    const ext = whaleExtension();
    await eventually('activation by the workspaceContains marker', () => (ext.isActive ? true : undefined));
    assert.equal(ext.extensionUri.scheme, 'file');
    const top = readdirSync(ext.extensionPath).sort();
    assert.ok(!top.includes('src') && !top.includes('test'), `sources were packaged: ${top.join(', ')}`);
    assert.ok(existsSync(join(ext.extensionPath, 'dist', 'cli.mjs')), 'dist/cli.mjs is missing');
    // The engine's pure-JS dependencies are bundled: only the on-disk parts are shipped as packages.
    const shipped = readdirSync(join(ext.extensionPath, 'node_modules')).sort();
    assert.deepEqual(
      shipped.filter((d) => !['@esbuild', '@resvg', 'dejavu-fonts-ttf', 'esbuild'].includes(d)),
      [],
      `unexpected node_modules: ${shipped.join(', ')}`,
    );
    console.log(`    [info] installed at ${ext.extensionPath}`);
  });

  test('the installed CLI runs: whale domains', async () => {
    const ext = await activated();
    const { stdout } = await promisify(execFile)(process.execPath, [join(ext.extensionPath, 'bin', 'whale.js'), 'domains'], { cwd: projectFolder().fsPath });
    assert.match(stdout, /kbqa/);
    assert.match(stdout, /ramble/);
  });

  test('Evaluate Candidate runs the TypeScript h0 on the embedded policy through the installed engine', async () => {
    await activated();
    const root = projectFolder().fsPath;
    const summary = await vscode.commands.executeCommand<{ meanAtK: number; k: number; tasks: number; rollouts: number; cacheHit: boolean } | undefined>(
      'whale.evaluateCandidate',
      vscode.Uri.file(join(root, 'harnesses', 'h0')),
    );
    assert.ok(summary, 'the command failed: see the WHALE log (the engine could not run from the installed package)');
    // fixtures/project: k = 1 on 4 validation tasks
    assert.equal(summary.k, 1);
    assert.equal(summary.tasks, 4);
    assert.equal(summary.rollouts, 4);
    assert.equal(summary.cacheHit, false);
    assert.ok(summary.meanAtK >= 0 && summary.meanAtK <= 1, `mean@k out of range: ${summary.meanAtK}`);
    assert.ok(existsSync(join(root, '.whale', 'results')), 'no results were written to the run store');
    const again = await vscode.commands.executeCommand<{ cacheHit: boolean; meanAtK: number } | undefined>(
      'whale.evaluateCandidate',
      vscode.Uri.file(join(root, 'harnesses', 'h0')),
    );
    assert.deepEqual(
      again && { cacheHit: again.cacheHit, meanAtK: again.meanAtK },
      { cacheHit: true, meanAtK: summary.meanAtK },
      'a repeated evaluation is not served from the cache',
    );
  });

  test('the shipped resvg addon renders a chart PNG', async () => {
    const ext = await activated();
    const req = createRequire(join(ext.extensionPath, 'dist', 'cli.mjs'));
    const { Resvg } = req('@resvg/resvg-js') as { Resvg: new (svg: string, opts?: object) => { render(): { asPng(): Buffer; width: number } } };
    const font = req.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf');
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40"><text x="4" y="28" font-family="DejaVu Sans" font-size="20">mean@k</text></svg>';
    const image = new Resvg(svg, { font: { loadSystemFonts: false, fontFiles: [font], defaultFontFamily: 'DejaVu Sans' } }).render();
    const png = image.asPng();
    assert.equal(image.width, 120);
    assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47], 'not a PNG');
  });
});

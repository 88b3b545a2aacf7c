// A huge trajectory does not freeze the editor: one rollout of ~30 MB (400 turns, each pasting a
// long document into the prompt) opened from the store, while the extension host keeps answering
// commands; the transcript is clipped with its "⋯ transcript truncated" line and its FAIL verdict
// still marked. The bounds are generous: they catch a freeze (a host blocked for the whole read),
// not a slow machine.
import * as assert from 'node:assert/strict';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { suite, suiteTeardown, test } from 'mocha';
import * as vscode from 'vscode';
import { ResultStore } from '../../../src/archive/resultStore.js';
import type { TrajectoryRef } from '../../../src/extension/trajectories/ref.js';
import { hugeTrajectory } from '../../support/syntheticTrajectory.js';
import { activated, eventually, projectFolder } from './helpers.js';

interface Inspect {
  loaded: boolean;
  marks?: { pass: number[]; fail: number[]; truncated: number[]; errors: number[] };
}

/** A freeze of the extension host would hold a command's answer for the whole load; this is far above a healthy answer. */
const FREEZE_MS = 15_000;

suite('a huge trajectory', () => {
  const keyHash = 'feed'.repeat(8);
  let file: string;

  suiteTeardown(() => rmSync(dirname(file), { recursive: true, force: true }));

  test('opens clipped, with its verdict marked, while the extension host keeps answering', async function () {
    this.timeout(300_000);
    await activated();
    const store = join(projectFolder().fsPath, '.whale');
    file = new ResultStore(store).trajectoriesFile(keyHash);
    mkdirSync(dirname(file), { recursive: true });
    const t = hugeTrajectory(30);
    writeFileSync(file, JSON.stringify(t) + '\n');
    const mb = statSync(file).size / 1e6;
    assert.ok(mb > 25, `the trajectory file is ${mb.toFixed(1)} MB, meant to be tens of MB`);

    const ref: TrajectoryRef = { store, keyHash, index: 0, id: t.id, taskId: t.taskId };
    const started = Date.now();
    let loaded = false;
    const opening = Promise.resolve(vscode.commands.executeCommand<string>('whale.openTrajectory', ref)).finally(() => (loaded = true));
    // Meanwhile, another command of the same extension host, again and again, with 50 ms pauses:
    // how late each round is — a host blocked by the load delays the answer or the timer.
    const delays: number[] = [];
    while (!loaded && Date.now() - started < 120_000) {
      const asked = Date.now();
      await vscode.commands.executeCommand('whale.trajectories.inspect', vscode.Uri.parse('whale-trajectory:/00000000/0/none.whale-transcript'));
      await new Promise((r) => setTimeout(r, 50));
      delays.push(Date.now() - asked - 50);
    }
    const uri = vscode.Uri.parse(await opening);
    const openMs = Date.now() - started;
    console.log(
      `    ${mb.toFixed(1)} MB trajectory opened in ${openMs} ms; ${delays.length} other command(s) answered meanwhile, latest by ${Math.max(0, ...delays)} ms`,
    );
    assert.ok(Math.max(0, ...delays) < FREEZE_MS, `the extension host froze: a command waited ${Math.max(...delays)} ms while the trajectory loaded`);

    const doc = vscode.window.activeTextEditor?.document;
    assert.equal(doc?.uri.toString(), uri.toString(), 'the transcript is the active editor');
    const text = doc.getText();
    assert.match(text, /⋯ transcript truncated at 20,000 lines: \d+ of 400 turns not shown/);
    assert.ok(doc.lineCount < 20_100, `the transcript has ${doc.lineCount} lines: it was not clipped`);
    assert.match(text, /^verdict\s+FAIL/m);
    const marks = await eventually(
      'the transcript decorations',
      async () => (await vscode.commands.executeCommand<Inspect>('whale.trajectories.inspect', uri)).marks,
    );
    assert.equal(marks.fail.length, 1, 'the FAIL verdict is marked');
    assert.ok(marks.truncated.length >= 1, 'the truncation is marked');
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });
});

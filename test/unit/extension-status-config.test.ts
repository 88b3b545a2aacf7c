// The status bar's state machine and the config problems the Problems panel shows (vscode-free).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getDomain } from '../../src/domains/index.js';
import { configProblems } from '../../src/extension/model/configProblems.js';
import { statusState, statusView } from '../../src/extension/model/statusModel.js';
import { describeBackend, type RunNode } from '../../src/extension/model/runsModel.js';

const run = (id: string, status: RunNode['status'], extra: Partial<RunNode> = {}): RunNode => ({ id, status, cycles: [], policies: new Map(), ...extra });

test('status bar: no project, idle, running phase X of cycle k, stopped, error — with command links', () => {
  assert.deepEqual(statusState(false, []), { kind: 'no-project' });
  assert.match(statusView(statusState(false, [])).tooltip, /\(command:whale\.newProject\)/);
  assert.deepEqual(statusState(true, []), { kind: 'idle' });
  const phase = {
    index: 3,
    kind: 'harness' as const,
    cycle: 1,
    status: 'running' as const,
    version: 'v',
    harness: 'h',
    started: { version: 'v', harness: 'h' },
    rollouts: 0,
  };
  const running = statusState(true, [run('b', 'paused'), run('a', 'running', { current: phase })]);
  assert.deepEqual(running, { kind: 'running', run: 'a', phase: 3, phaseKind: 'harness', cycle: 1 });
  const v = statusView(running);
  assert.equal(v.text, '$(sync~spin) WHALE: harness phase 3 of cycle 1');
  assert.match(v.tooltip, /\[Stop\]\(command:whale\.stop\)/);
  assert.equal(statusState(true, [run('a', 'stopped', { detail: 'stop requested' })]).kind, 'stopped');
  const dead = statusState(true, [run('a', 'interrupted', { detail: 'the engine (pid 7) ended during phase 0' })]);
  assert.deepEqual(dead, { kind: 'error', run: 'a', message: 'the engine (pid 7) ended during phase 0' });
  assert.equal(statusView(dead).error, true);
  assert.match(statusView(dead).tooltip, /command:whale\.resumeRun/);
  const withBackend = statusView(running, describeBackend({ kind: 'tinker', capabilities: { update: 'lora', tokenIds: true, logprobs: false } }));
  assert.match(
    withBackend.tooltip,
    /Backend: tinker · training lora · token ids yes · logprobs no · \[Check Backend Health\]\(command:whale\.backend\.checkHealth\) · \[Connect Backend\]\(command:whale\.backend\.connect\)/,
  );
  const down = statusView(running, 'split', {
    mark: '$(debug-disconnect)',
    text: 'split: unreachable since 02:05:10 UTC (sampler http://gpu:8000/v1/models: ECONNREFUSED; 3 failed checks)',
  });
  assert.match(down.text, /\$\(debug-disconnect\)$/);
  assert.match(down.tooltip, /Configured backend split: unreachable since 02:05:10 UTC/);
  assert.equal(
    statusView(running, 'embedded', { mark: '', text: 'embedded: in this process (nothing to probe)' }).text,
    statusView(running).text,
    'no mark for the in-process backend',
  );
  assert.equal(describeBackend(undefined), undefined, 'runs from before backends were journaled');
  assert.equal(
    statusState(true, [run('a', 'finished')], 'the engine exited with code 1').kind,
    'error',
    "this window's engine error shows until the next start",
  );
  // Resume Run is offered for a paused run, never for a finished one.
  const finished = statusView(statusState(true, [run('a', 'finished')]));
  assert.match(finished.tooltip, /^Latest run: `a` \(finished\)/);
  assert.doesNotMatch(finished.tooltip, /whale\.resumeRun/);
  assert.match(statusView(statusState(true, [run('a', 'paused')])).tooltip, /\[Resume Run\]\(command:whale\.resumeRun\)/);
  assert.equal(statusState(true, [run('a', 'running')], 'old error').kind, 'running', 'a running engine wins');
});

test('config problems: zod errors with line, column and field; an unknown domain and a missing harness folder point at their fields', () => {
  const dir = mkdtempSync(join(tmpdir(), 'whale-cfg-'));
  const file = join(dir, 'whale.config.json');
  const bad = '{\n  "name": "x",\n  "domain": { "id": "kbqa" },\n  "harness": "h0",\n  "evaluation": { "k": -1 },\n  "bogus": 1\n}\n';
  const p = configProblems(bad, file);
  const k = p.find((x) => x.field === 'evaluation.k');
  assert.ok(k, JSON.stringify(p));
  assert.equal(k.line, 5);
  assert.ok(
    p.some((x) => x.line === 1 || /bogus/.test(x.message)),
    'the unknown key is reported',
  );
  const syntax = configProblems('{ "name": ', file);
  assert.ok(syntax.length >= 1 && syntax.every((x) => x.line === 1 && /invalid JSON/.test(x.message)), JSON.stringify(syntax));
  const missing = configProblems('{\n  "name": "x",\n  "domain": { "id": "nosuch" },\n  "harness": "h0"\n}\n', file);
  assert.deepEqual(
    missing.map((x) => [x.field, x.line]),
    [
      ['domain.id', 3],
      ['harness', 4],
    ],
  );
  assert.match(missing[0].message, /unknown domain 'nosuch' \(known domains: kbqa, ramble, searchqa/);
  assert.match(missing[1].message, /no harness folder at .*h0/);
  cpSync(getDomain('kbqa').h0Dir, join(dir, 'h0'), { recursive: true });
  assert.deepEqual(configProblems('{\n  "name": "x",\n  "domain": { "id": "kbqa" },\n  "harness": "h0"\n}\n', file), []);
});

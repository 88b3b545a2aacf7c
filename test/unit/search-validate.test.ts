// Candidate validation through the real harness runtime (sandboxed processes, gateway, the kbqa
// domain's rules), with a scripted policy: the model's quality does not matter here.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxLimitsSchema, SamplingSchema } from '../../src/core/config.js';
import { getDomain } from '../../src/domains/index.js';
import { KBQA_INSTRUCTIONS } from '../../src/domains/text.js';
import { HarnessRuntime } from '../../src/harness/runtime.js';
import { ScriptedBackend } from '../../src/harness/testing/scriptedBackend.js';
import { fstDifferences, validateCandidate, type ValidateOptions } from '../../src/search/validate.js';

const root = mkdtempSync(join(tmpdir(), 'whale-validate-'));
const domain = getDomain('kbqa');
const h0 = domain.h0Dir;
let runtime: HarnessRuntime;
let n = 0;

before(() => {
  // A model that searches the question's subject, then answers with a word it read.
  const backend = new ScriptedBackend((messages) => {
    const last = messages[messages.length - 1];
    if (last.role === 'tool') return `answer ${last.content.split(' ')[2] ?? 'eel'}`;
    const subject = /of (\S+) \?/.exec(last.content)?.[1] ?? 'Lodos';
    return `search ${subject}`;
  });
  runtime = new HarnessRuntime({
    domain,
    backend,
    limits: SandboxLimitsSchema.parse({ wallMs: 10_000 }),
    sampling: SamplingSchema.parse({}),
    concurrency: 2,
    cacheDir: join(root, 'cache'),
  });
});
after(async () => {
  await runtime.close();
  rmSync(root, { recursive: true, force: true });
});

function candidate(edit: (dir: string) => void = () => undefined): string {
  const dir = join(root, `cand-${n++}`);
  cpSync(h0, dir, { recursive: true });
  edit(dir);
  return dir;
}

function editJson(dir: string, f: (j: Record<string, any>) => void): void {
  const file = join(dir, 'harness.json');
  const j = JSON.parse(readFileSync(file, 'utf8'));
  f(j);
  writeFileSync(file, JSON.stringify(j, null, 2) + '\n');
}

function editCode(dir: string, from: string, to: string): void {
  const file = join(dir, 'harness.ts');
  const src = readFileSync(file, 'utf8');
  assert.ok(src.includes(from), from);
  writeFileSync(file, src.replace(from, to));
}

const opts = (over: Partial<ValidateOptions> = {}): ValidateOptions => ({ runtime, domain, mode: 'full', h0Dir: h0, ...over });

test('a good candidate is valid: prepared, one smoke rollout through the real runtime', async () => {
  const dir = candidate((d) => editJson(d, (j) => (j.settings.topk = 3)));
  const v = await validateCandidate(dir, opts());
  assert.equal(v.ok, true, JSON.stringify(!v.ok && v.reasons));
  if (!v.ok) return;
  assert.equal(v.prepared.knobs.topk, 3);
  assert.equal(v.smokeRollouts, 1);
  assert.equal(v.smoke.taskId, domain.tasks('harness')[0].id);
  assert.equal(v.smoke.split, 'harness');
  assert.equal(v.smoke.termination, 'answered');
  assert.ok(v.smoke.modelCalls.length >= 1);
  assert.deepEqual(v.warnings, []);
});

test('a crashing harness is invalid, with the termination and its detail as the reason', async () => {
  const dir = candidate((d) => editCode(d, 'const k = ctx.knobs;', "const k = ctx.knobs;\n    if (task.id) throw new Error('boom in run');"));
  const v = await validateCandidate(dir, opts());
  assert.equal(v.ok, false);
  if (v.ok) return;
  assert.equal(v.reasons.length, 1);
  assert.match(v.reasons[0], /^smoke run on task \S+: crash: .*boom in run/);
  assert.equal(v.smokeRollouts, 1);
  assert.equal(v.smoke?.termination, 'crash');
});

test('a harness that breaks the domain rule (answers by itself) is invalid: rule_violation', async () => {
  const dir = candidate((d) => editCode(d, 'return { answer: act.arg };', "return { answer: 'zebra' };"));
  const v = await validateCandidate(dir, opts());
  assert.equal(v.ok, false);
  if (v.ok) return;
  assert.match(v.reasons[0], /: rule_violation: /);
});

test('a harness.json error is invalid with file and field; no smoke rollout is paid for', async () => {
  const dir = candidate((d) => editJson(d, (j) => (j.settings.topk = 9)));
  const v = await validateCandidate(dir, opts());
  assert.equal(v.ok, false);
  if (v.ok) return;
  assert.equal(v.smokeRollouts, 0);
  assert.ok(
    v.reasons.some((r) => r.includes('harness.json') && r.includes('settings.topk') && r.includes('[1, 5]')),
    v.reasons.join('\n'),
  );
  const bad = candidate((d) => writeFileSync(join(d, 'harness.json'), '{ "name": "x", '));
  const w = await validateCandidate(bad, opts());
  assert.equal(w.ok, false);
  if (!w.ok) assert.match(w.reasons[0], /harness\.json:\d+:\d+: invalid JSON/);
  const noEntry = candidate((d) => editJson(d, (j) => (j.entry = 'missing.ts')));
  const x = await validateCandidate(noEntry, opts());
  assert.equal(x.ok, false);
  if (!x.ok) assert.match(x.reasons.join('\n'), /missing\.ts/);
});

test('FST: a prompt-only change is valid; a code change and a knob change are invalid, naming file and field', async () => {
  const prompt = candidate((d) => editJson(d, (j) => (j.prompts.system = KBQA_INSTRUCTIONS.full)));
  assert.deepEqual(fstDifferences(h0, prompt), []);
  const ok = await validateCandidate(prompt, opts({ mode: 'fst' }));
  assert.equal(ok.ok, true, JSON.stringify(!ok.ok && ok.reasons));
  if (ok.ok) assert.equal(ok.smoke.modelCalls[0].messages[0].content, KBQA_INSTRUCTIONS.full, 'the new system prompt reached the model');

  const code = candidate((d) => editCode(d, "const NO_FACTS = 'no facts';", "const NO_FACTS = 'none';"));
  const c = await validateCandidate(code, opts({ mode: 'fst' }));
  assert.equal(c.ok, false);
  if (!c.ok) {
    assert.equal(c.reasons.length, 1);
    assert.match(c.reasons[0], /^harness\.ts:\d+: changed \(FST mode may change only the prompt strings/);
    assert.equal(c.smokeRollouts, 0);
  }
  // The same code change is fine outside FST mode.
  assert.equal((await validateCandidate(code, opts())).ok, true);

  const knob = candidate((d) => editJson(d, (j) => (j.settings.topk = 3)));
  const k = await validateCandidate(knob, opts({ mode: 'fst' }));
  assert.equal(k.ok, false);
  if (!k.ok) assert.deepEqual(k.reasons, ['harness.json: settings.topk changed from 1 to 3 (FST mode may change only the prompt strings in harness.json)']);

  // Other manifest fields, new files, new prompts and removed prompts are all changes.
  const misc = candidate((d) => {
    editJson(d, (j) => {
      j.description = 'changed';
      j.prompts.extra = 'hi';
      delete j.prompts.user;
      j.knobs.topk.max = 9;
    });
    writeFileSync(join(d, 'helper.ts'), 'export {};\n');
  });
  const reasons = fstDifferences(h0, misc);
  assert.equal(reasons.length, 5, reasons.join('\n'));
  for (const pat of [
    /^harness\.json: description changed/,
    /^harness\.json: knobs\.topk\.max changed from 5 to 9/,
    /^harness\.json: prompts\.extra added/,
    /^harness\.json: prompts\.user removed/,
    /^helper\.ts: added/,
  ])
    assert.ok(
      reasons.some((r) => pat.test(r)),
      `${pat} in\n${reasons.join('\n')}`,
    );
  await assert.rejects(validateCandidate(prompt, { runtime, domain, mode: 'fst' }), /needs h0Dir/);
});

// Seeded fuzz of the llm proposer's archive tools (src/search/llm/archiveTools.ts) with hostile
// arguments: path traversal, absolute paths, links planted in an archive candidate, NUL and control
// bytes, huge strings, wrong types, deep JSON, unknown fields, catastrophic regular expressions.
// Every call must come back (no exception ends the session), an error must name the argument that
// was bad (and never be an "internal error"), nothing outside the round's output folder may be
// written, and no planted secret, answer, sealed-test or other-run data may ever appear in an output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '../../src/core/rng.js';
import type { Trajectory } from '../../src/core/trajectory.js';
import { gitTreeHash } from '../../src/core/treeHash.js';
import { getDomain } from '../../src/domains/index.js';
import { ArchiveTools, TOOL_SPECS } from '../../src/search/llm/archiveTools.js';
import type { ArchiveView, ProposeRequest } from '../../src/search/proposer.js';
import { synthetic } from '../support/syntheticTrajectory.js';

const MARKERS = ['ANSWER-MARKER-5d1', 'SECRET-MARKER-9c4', 'SEALED-MARKER-21a', 'REASON-MARKER-77e', 'OTHERRUN-MARKER-3b0', 'ENV-MARKER-e42'];
const SEED = 20261201;
const CALLS = 900;

function snapshot(dir: string, skip: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      if (full === skip) continue;
      const st = statSync(full, { throwIfNoEntry: false });
      out.set(full, st ? `${st.size}:${st.mtimeMs}:${st.mode}` : 'dangling');
      if (st?.isDirectory() && !full.endsWith('lnk')) walk(full);
    }
  };
  walk(dir);
  return out;
}

test(
  'archive tools under a seeded fuzz of hostile arguments: every call returns, errors name the argument, nothing leaks or is written outside',
  { timeout: 300_000 },
  async () => {
    const root = mkdtempSync(join(tmpdir(), 'whale-toolfuzz-'));
    try {
      // What must stay unreachable: the user's files and the project secret, answers, a sealed test
      // evaluation, another run's evaluation, and the engine's environment.
      const secrets = join(root, 'secrets');
      mkdirSync(secrets);
      writeFileSync(join(secrets, 'answers.txt'), MARKERS[0]);
      writeFileSync(join(secrets, 'secret'), MARKERS[1]);
      process.env.WHALE_FUZZ_API_KEY = MARKERS[5];
      const h0 = join(root, 'h0');
      cpSync(getDomain('kbqa').h0Dir, h0, { recursive: true });
      const h0Hash = gitTreeHash(h0);
      // A candidate as a hostile archive could hold it: links out, a dangling link, a line that makes
      // a naive regular expression backtrack for ever.
      const planted = join(root, 'planted');
      cpSync(h0, planted, { recursive: true });
      writeFileSync(join(planted, 'redos.txt'), 'a'.repeat(1990) + '!\n');
      const plantedHash = gitTreeHash(planted);
      symlinkSync(secrets, join(planted, 'lnk'));
      symlinkSync(join(secrets, 'answers.txt'), join(planted, 'lnk2'));
      symlinkSync(join(root, 'nowhere'), join(planted, 'dangling'));
      const evals = join(root, 'evals');
      mkdirSync(evals);
      const traj = (i: number, over: Partial<Trajectory>) => JSON.stringify({ ...synthetic(i), ...over });
      const SEARCH = 'a1'.repeat(20);
      const SEALED = 'b2'.repeat(20);
      const OTHER = 'c3'.repeat(20);
      writeFileSync(
        join(evals, `${SEARCH}.jsonl`),
        [0, 1, 2].map((i) => traj(i, { split: 'harness', verdict: { pass: i === 0, score: i === 0 ? 1 : 0, extracted: 'x', reason: MARKERS[3] } })).join('\n') +
          '\n',
      );
      writeFileSync(join(evals, `${SEALED}.jsonl`), traj(5, { split: 'test', finalAnswer: MARKERS[2] }) + '\n');
      writeFileSync(join(evals, `${OTHER}.jsonl`), traj(6, { split: 'harness', finalAnswer: MARKERS[4] }) + '\n');
      const score = (policyVersion: string, split: string, keyHash: string) => ({ policyVersion, split, mean: 0.3, se: 0.1, meanTurns: 2, keyHash });
      const view: ArchiveView = {
        domain: { id: 'kbqa', searchSpace: getDomain('kbqa').searchSpace },
        mode: 'full',
        candidates: [
          {
            treeHash: h0Hash,
            parents: [],
            round: 0,
            origin: 'seed',
            hypothesis: 'h0',
            valid: true,
            invalidReasons: [],
            scores: [score('v1', 'harness', SEARCH), score('v-sealed', 'test', SEALED)],
          },
          {
            treeHash: plantedHash,
            parents: [h0Hash],
            round: 1,
            origin: 'proposer',
            hypothesis: 'planted',
            valid: true,
            invalidReasons: [],
            scores: [score('v1', 'harness', SEARCH)],
          },
        ],
        incumbent: h0Hash,
        policyVersion: 'v1',
        materialize: async (h) => {
          if (h === h0Hash) return h0;
          if (h === plantedHash) return planted;
          throw new Error(`materialize asked for ${h}, which the view does not list`);
        },
        taskResults: (k) => (k === SEARCH ? [{ taskId: 't1', passes: 0, samples: 1, mean: 0, terminations: { answered: 1 } }] : []),
        trajectoriesFile: (k) => join(evals, `${k}.jsonl`),
        annotations: [{ text: 'a note' }],
        pastReports: [{ round: 0, text: 'nothing yet' }],
      };
      const outDir = join(root, 'out');
      mkdirSync(outDir);
      const req: ProposeRequest = { round: 1, count: 100_000, view, outDir, seed: 1, logFile: join(outDir, 'session.jsonl') };
      const tools = new ArchiveTools(req, 12_000);
      const before = snapshot(root, outDir);

      const deep = JSON.parse('['.repeat(5000) + ']'.repeat(5000)) as unknown;
      const deepObj = JSON.parse('{"a":'.repeat(3000) + '1' + '}'.repeat(3000)) as unknown;
      const hostileStrings = [
        '../../../../etc/passwd',
        '/etc/passwd',
        join(secrets, 'answers.txt'),
        '..',
        '.',
        './',
        'a/../../x',
        'lnk/answers.txt',
        'lnk',
        'lnk2',
        'dangling',
        'dangling/x',
        'harness.json\0.txt',
        '\0',
        'a\nb',
        'x'.repeat(1_000_000),
        'y'.repeat(300) + '/z',
        'C:\\Windows\\win.ini',
        'a\\..\\..\\b',
        '.git/config',
        'node_modules/x.js',
        '%2e%2e/%2e%2e/etc/passwd',
        '~/.ssh/id_rsa',
        'file:///etc/passwd',
        '',
        ' ',
        SEALED,
        OTHER,
        SEALED.slice(0, 8),
        '0'.repeat(40),
        h0Hash.slice(0, 5),
        'v-sealed',
        '(a+)+$',
        '(a|aa)*!b',
        '[',
        '(?<',
        '\\',
        '__proto__',
        'constructor',
      ];
      const hostileValues: unknown[] = [
        ...hostileStrings,
        42,
        -1,
        1.5,
        1e308,
        null,
        true,
        false,
        [],
        ['a'],
        {},
        { $ref: '#' },
        deep,
        deepObj,
        Array(100_000).fill('a'),
      ];
      const base = (name: string): Record<string, unknown> =>
        ({
          list_candidates: {},
          list_files: { candidate: plantedHash },
          read_file: { candidate: plantedHash, path: 'harness.json' },
          grep: { pattern: 'answer', candidate: plantedHash },
          diff: { candidate: plantedHash, against: h0Hash },
          task_results: { candidate: h0Hash },
          trajectories: { candidate: h0Hash },
          annotations: {},
          past_reports: {},
          write_candidate: { parent: plantedHash, files: { 'notes.txt': 'x' }, hypothesis: 'h' },
          finish: { report: 'r' },
        })[name]!;

      const rng = new Rng(SEED);
      const tally = { calls: 0, errors: 0, accepted: 0 };
      const byArg = new Map<string, number>();
      for (let i = 0; i < CALLS; i++) {
        const spec = rng.pick(TOOL_SPECS);
        const args = base(spec.name);
        const props = Object.keys((spec.schema as { properties: Record<string, unknown> }).properties);
        const v = rng.pick(hostileValues);
        let arg: string;
        const r = rng.int(10);
        if (props.length === 0 || r === 0) {
          arg = rng.pick(['unknownField', '__proto__', 'x'.repeat(10_000), 'path\0', 'constructor']);
          Object.defineProperty(args, arg, { value: v, enumerable: true, configurable: true, writable: true });
        } else {
          arg = rng.pick(props);
          if (arg === 'files' && rng.chance(0.6)) {
            const key = typeof v === 'string' ? v : rng.pick(hostileStrings);
            args.files = rng.chance(0.5) ? { [key]: 'content' } : { 'ok.txt': v };
          } else if (arg === 'delete' && rng.chance(0.6)) args.delete = [rng.pick(hostileStrings)];
          else args[arg] = v;
        }
        const t0 = Date.now();
        const out = await tools.call(spec.name, args);
        const ms = Date.now() - t0;
        tally.calls++;
        assert.ok(ms < 15_000, `${spec.name}(${arg}) took ${ms} ms`);
        for (const m of MARKERS)
          assert.ok(
            !out.output.includes(m),
            `${spec.name} with ${arg}=${typeof v === 'string' ? JSON.stringify(v.slice(0, 60)) : Array.isArray(v) ? `array(${v.length})` : typeof v} leaked ${m}:\n${out.output.slice(0, 400)}`,
          );
        assert.doesNotMatch(out.output, /internal error/, `${spec.name}(${arg}): ${out.output.slice(0, 300)}`);
        if (out.isError) {
          tally.errors++;
          const key = `${spec.name}.${props.includes(arg) ? arg : '(unknown)'}`;
          byArg.set(key, (byArg.get(key) ?? 0) + 1);
          const named = props.includes(arg) ? out.output.includes(`'${arg}'`) : out.output.includes('unknown argument');
          assert.ok(named, `${spec.name}: the error does not name argument ${JSON.stringify(arg.slice(0, 40))}: ${out.output.slice(0, 300)}`);
        } else tally.accepted++;
      }
      // The cases the fuzz found, each once by hand: a regular expression that backtracks for ever on
      // the planted line (it hung the engine), a link that only lstat sees (dangling), '.' as a path.
      const t0 = Date.now();
      const redos = await tools.call('grep', { pattern: '(a+)+$', candidate: plantedHash });
      assert.ok(redos.isError && /argument 'pattern': .*ran longer/.test(redos.output), redos.output);
      assert.ok(Date.now() - t0 < 10_000);
      const del = await tools.call('write_candidate', { parent: plantedHash, files: { 'a.txt': 'x' }, delete: ['.'], hypothesis: 'wipe' });
      assert.match(del.output, /argument 'delete': path "\." is the candidate folder itself/);
      const unknown = await tools.call('read_file', { candidate: plantedHash, path: 'harness.json', root: '/' });
      assert.match(unknown.output, /unknown argument "root"; read_file takes candidate, path, offset, limit/);
      // Nothing outside the round's output folder changed, and every written candidate stayed inside it.
      assert.deepEqual(snapshot(root, outDir), before);
      for (const w of tools.written) assert.ok(w.dir.startsWith(outDir + '/'), w.dir);
      console.log(
        `fuzz: seed ${SEED}, ${tally.calls} calls, ${tally.errors} refused with the argument named, ${tally.accepted} accepted, ${tools.written.length} candidates written; refusals by tool.argument: ${[...byArg].map(([k, n]) => `${k} ${n}`).join(', ')}`,
      );
      assert.ok(tally.errors > CALLS / 3 && tally.accepted > 10, 'the fuzz exercised both refusals and accepted calls');
    } finally {
      delete process.env.WHALE_FUZZ_API_KEY;
      rmSync(root, { recursive: true, force: true });
    }
  },
);

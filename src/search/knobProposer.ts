/**
 * The offline `knob` proposer: a seeded evolutionary search over what a harness declares in its
 * harness.json — knob `settings` within each knob's domain, and prompt strings chosen from
 * `promptVariants`. It never edits code. In FST mode it changes only prompt strings.
 *
 * One round:
 * 1. Rank the archive's valid candidates by their score under the round's policy version (mean on the
 *    harness split, ties: fewer turns); candidates scored only under older versions come after them,
 *    unscored ones last.
 * 2. Learn from history: for every archived child whose parent was scored under the same policy
 *    version, the score change is credited to the edits that separate them (knob and direction, or
 *    the new value). Edits that helped are chosen more often; the credit is gentle (scores are noisy).
 * 3. Child 1 mutates the incumbent; the others mutate a parent picked by tournament (size 3), or
 *    (full mode, 25%) recombine two good parents with identical code (uniform crossover of settings and
 *    prompts; one extra mutation if the child equals a parent).
 *    A mutation edits one knob (65%) or two: int ±1 (70%) or ±2, enum/bool flip to another value,
 *    prompt → another declared variant.
 * 4. A child identical to an archived candidate (same tree hash, or the same code, settings and prompts
 *    written differently) or to an earlier child of the round is discarded and retried (up to
 *    `maxAttempts`; edits widen as attempts fail).
 * Each child is a copy of its parent's folder with a new harness.json; its hypothesis names the edits
 * and why they may help; the report sums up the archive, what helped so far and what was tried.
 * Deterministic: the same view (as a set of candidates) + seed + round gives the same children.
 */
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalJson } from '../archive/resultStore.js';
import { HarnessManifest, type KnobSpec } from '../core/manifest.js';
import { Rng, hashSeed } from '../core/rng.js';
import { gitTreeHash } from '../core/treeHash.js';
import type { ArchiveView, CandidateRecord, CandidateScore, Proposal, ProposeRequest, ProposedCandidate, Proposer } from './proposer.js';

type Value = string | number | boolean;
type RawManifest = Record<string, unknown> & { settings?: Record<string, Value>; prompts?: Record<string, string> };

export interface KnobProposerOptions {
  /** Probability that a child (after the first) is a crossover of two parents (full mode). */
  crossoverRate?: number;
  tournamentSize?: number;
  /** Tries per child before the proposer gives up on it (the neighbourhood is exhausted). */
  maxAttempts?: number;
  /** The split whose scores rank candidates (default 'harness'; any split when none is found there). */
  split?: string;
}

/** One edit of a child against its parent. */
interface Edit {
  /** `settings.topk` or `prompts.system`. */
  field: string;
  dim: Dim;
  from: Value;
  to: Value;
}

interface Dim {
  kind: 'knob' | 'prompt';
  name: string;
}

interface Loaded {
  rec: CandidateRecord;
  dir: string;
  raw: RawManifest;
  manifest: HarnessManifest;
  /** Hash of every file but harness.json: candidates with equal code can be recombined. */
  code: string;
  /** Code + resolved settings + prompts + the rest of the manifest: semantic identity. */
  semantic: string;
}

interface Ranked {
  c: Loaded;
  tier: number; // 0 scored under the round's version, 1 under an older one, 2 unscored
  score?: CandidateScore;
}

const dimKey = (d: Dim) => `${d.kind === 'knob' ? 'settings' : 'prompts'}.${d.name}`;

/** Short reasons for common knob names; other knobs get a generic reason. */
const HINTS: Record<string, { up: string; down: string; set?: string }> = {
  topk: { up: 'the needed fact is often below the top results shown', down: 'fewer results keep the context short and less distracting' },
  maxSearches: { up: 'multi-hop questions need more than one search, and a repeated search pages further', down: 'fewer searches force an earlier answer' },
  maxTurns: { up: 'more turns leave room to recover', down: 'fewer turns cut wandering' },
  formatRetries: { up: 'feedback after a malformed action lets the model try again', down: 'feedback turns cost context and budget' },
  parse: { up: '', down: '', set: 'a lenient parser recovers answers written in a slightly wrong format' },
  requireSearch: { up: '', down: '', set: 'answering before searching is guessing from the prior' },
  instruction: { up: '', down: '', set: 'an explicit instruction tells the model the protocol and to look facts up' },
  passageFormat: { up: '', down: '', set: 'another passage layout may make the value easier to copy' },
};

function fmt(v: Value): string {
  if (typeof v === 'string') return v === '' ? "''" : v.length > 40 ? JSON.stringify(v.slice(0, 37) + '…') : JSON.stringify(v);
  return String(v);
}

function codeSignature(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d).sort()) {
      if (name === '.git' || name === 'node_modules' || name === '.whale-build' || name === '.DS_Store') continue;
      const full = join(d, name);
      const path = rel ? `${rel}/${name}` : name;
      const st = lstatSync(full);
      if (st.isDirectory()) walk(full, path);
      else if (st.isFile() && path !== 'harness.json') {
        h.update(`${path}\0${statSync(full).mode & 0o111 ? 'x' : '-'}\0`);
        h.update(readFileSync(full));
        h.update('\0');
      }
    }
  };
  walk(dir, '');
  return h.digest('hex');
}

/** Everything FST mode must keep: the code and every harness.json field but the prompt values. */
function fstKey(l: Pick<Loaded, 'raw' | 'code'>): string {
  const prompts = l.raw.prompts && typeof l.raw.prompts === 'object' ? Object.keys(l.raw.prompts).sort() : l.raw.prompts;
  return canonicalJson({ code: l.code, manifest: { ...l.raw, prompts } });
}

function resolvedSettings(m: HarnessManifest): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const [k, spec] of Object.entries(m.knobs) as [string, KnobSpec][]) out[k] = m.settings[k] ?? spec.default;
  return out;
}

function semanticKey(raw: RawManifest, manifest: HarnessManifest, code: string): string {
  return canonicalJson({ code, manifest: { ...raw, settings: resolvedSettings(manifest), prompts: manifest.prompts } });
}

/** The values a dimension may take (declared domain, or declared prompt variants plus the current text). */
function domainOf(m: HarnessManifest, d: Dim): Value[] {
  if (d.kind === 'prompt') return [...new Set(m.promptVariants[d.name] ?? [])];
  const spec = m.knobs[d.name];
  if (!spec) return [];
  if (spec.type === 'bool') return [false, true];
  if (spec.type === 'enum') return spec.values;
  const out: number[] = [];
  for (let v = spec.min; v <= spec.max; v++) out.push(v);
  return out;
}

function valueOf(m: HarnessManifest, d: Dim): Value {
  if (d.kind === 'prompt') return m.prompts[d.name] ?? '';
  return resolvedSettings(m)[d.name];
}

function dimsOf(m: HarnessManifest, mode: 'full' | 'fst'): Dim[] {
  const dims: Dim[] = [];
  if (mode === 'full') for (const name of Object.keys(m.knobs).sort()) dims.push({ kind: 'knob', name });
  for (const name of Object.keys(m.promptVariants).sort()) if (name in m.prompts) dims.push({ kind: 'prompt', name });
  return dims.filter((d) => domainOf(m, d).some((v) => v !== valueOf(m, d)));
}

function editsBetween(a: HarnessManifest, b: HarnessManifest): Edit[] {
  const out: Edit[] = [];
  const sa = resolvedSettings(a);
  const sb = resolvedSettings(b);
  for (const k of Object.keys(sb).sort())
    if (k in sa && sa[k] !== sb[k]) out.push({ field: `settings.${k}`, dim: { kind: 'knob', name: k }, from: sa[k], to: sb[k] });
  for (const k of Object.keys(b.prompts).sort())
    if (k in a.prompts && a.prompts[k] !== b.prompts[k])
      out.push({ field: `prompts.${k}`, dim: { kind: 'prompt', name: k }, from: a.prompts[k], to: b.prompts[k] });
  return out;
}

/** Credit of past edits: mean score change of the children that made them. */
class Credit {
  private readonly byDim = new Map<string, { sum: number; n: number }>();
  private readonly byMove = new Map<string, { sum: number; n: number }>();

  static moveKey(e: Pick<Edit, 'field' | 'from' | 'to'>): string[] {
    const keys = [`${e.field}=${JSON.stringify(e.to)}`];
    if (typeof e.from === 'number' && typeof e.to === 'number') keys.push(`${e.field}:${e.to > e.from ? 'up' : 'down'}`);
    return keys;
  }

  record(edits: Edit[], delta: number): void {
    for (const e of edits) {
      const share = delta / edits.length;
      bump(this.byDim, e.field, share);
      for (const k of Credit.moveKey(e)) bump(this.byMove, k, share);
    }
  }

  /** exp(mean Δ × 10) clamped to [0.4, 3]: +0.1 mean gain ≈ ×2.7. */
  private static weight(s: { sum: number; n: number } | undefined): number {
    if (!s) return 1;
    return Math.min(3, Math.max(0.4, Math.exp((s.sum / s.n) * 10)));
  }

  dimWeight(field: string): number {
    return Credit.weight(this.byDim.get(field));
  }

  moveWeight(e: Pick<Edit, 'field' | 'from' | 'to'>): number {
    return Credit.moveKey(e).reduce((w, k) => w * Credit.weight(this.byMove.get(k)), 1);
  }

  summary(limit = 5): string[] {
    return [...this.byMove.entries()]
      .map(([k, s]) => ({ k, mean: s.sum / s.n, n: s.n }))
      .sort((a, b) => b.mean - a.mean || (a.k < b.k ? -1 : 1))
      .slice(0, limit)
      .map((r) => `${r.k}: ${r.mean >= 0 ? '+' : ''}${r.mean.toFixed(3)} (${r.n})`);
  }
}

function bump(m: Map<string, { sum: number; n: number }>, k: string, d: number): void {
  const s = m.get(k) ?? { sum: 0, n: 0 };
  s.sum += d;
  s.n += 1;
  m.set(k, s);
}

function weightedPick<T>(rng: Rng, items: T[], weight: (t: T) => number): T {
  const ws = items.map(weight);
  const total = ws.reduce((a, b) => a + b, 0);
  let r = rng.next() * total;
  for (let i = 0; i < items.length; i++) {
    r -= ws[i];
    if (r < 0) return items[i];
  }
  return items[items.length - 1];
}

export class KnobProposer implements Proposer {
  readonly kind = 'knob';
  private readonly crossoverRate: number;
  private readonly tournamentSize: number;
  private readonly maxAttempts: number;
  private readonly split: string;

  constructor(opts: KnobProposerOptions = {}) {
    this.crossoverRate = opts.crossoverRate ?? 0.25;
    this.tournamentSize = opts.tournamentSize ?? 3;
    this.maxAttempts = opts.maxAttempts ?? 40;
    this.split = opts.split ?? 'harness';
  }

  private scoreOf(c: CandidateRecord, version: string): CandidateScore | undefined {
    const rows = c.scores.filter((s) => s.policyVersion === version);
    return rows.filter((s) => s.split === this.split).at(-1) ?? rows.at(-1);
  }

  async propose(req: ProposeRequest): Promise<Proposal> {
    const { view } = req;
    const rng = new Rng(hashSeed(`knob/${req.seed}/${req.round}`));
    const records = [...view.candidates].sort((a, b) => (a.treeHash < b.treeHash ? -1 : 1));
    const known = new Set(records.map((c) => c.treeHash));
    const loaded = new Map<string, Loaded>();
    const skipped: string[] = [];
    for (const rec of records) {
      req.signal?.throwIfAborted();
      const l = await this.load(view, rec).catch((e: unknown) => {
        skipped.push(`${rec.treeHash.slice(0, 12)} (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`);
        return undefined;
      });
      if (l) loaded.set(rec.treeHash, l);
    }
    const semantics = new Set([...loaded.values()].map((l) => l.semantic));

    // Credit past edits: child vs parent under the same policy version.
    const credit = new Credit();
    for (const l of loaded.values()) {
      if (l.rec.parents.length !== 1 || !l.rec.valid) continue;
      const p = loaded.get(l.rec.parents[0]);
      if (!p) continue;
      for (const s of l.rec.scores) {
        const ps = this.scoreOf(p.rec, s.policyVersion);
        if (!ps || ps.split !== s.split) continue;
        const edits = editsBetween(p.manifest, l.manifest);
        if (edits.length > 0) credit.record(edits, s.mean - ps.mean);
        break;
      }
    }

    let pool = [...loaded.values()].filter((l) => l.rec.valid);
    const inc = loaded.get(view.incumbent);
    if (view.mode === 'fst' && inc) {
      // FST: only candidates that differ from the incumbent (an FST-legal candidate) in prompt values
      // may be parents; the archive is shared by runs of every method.
      const key = fstKey(inc);
      pool = pool.filter((l) => fstKey(l) === key);
    }
    const ranked = this.rank(pool, view.policyVersion);
    const lines: string[] = [];
    const out: ProposedCandidate[] = [];
    const incumbent = ranked.find((r) => r.c.rec.treeHash === view.incumbent) ?? ranked[0];
    const header = this.header(req, records, ranked, incumbent, credit, skipped);
    if (!incumbent) return { candidates: [], report: header + '\nNo valid candidate to start from: nothing proposed.\n', dollars: 0 };

    mkdirSync(req.outDir, { recursive: true });
    for (let i = 0; i < req.count; i++) {
      req.signal?.throwIfAborted();
      const childDir = join(req.outDir, `r${req.round}-k${i}`);
      let made: { parents: Loaded[]; edits: Edit[]; crossover: boolean } | undefined;
      for (let attempt = 0; attempt < this.maxAttempts && !made; attempt++) {
        const widen = attempt >= this.maxAttempts / 2 ? 1 : 0;
        const crossover = i > 0 && view.mode === 'full' && ranked.length >= 2 && rng.chance(this.crossoverRate);
        const plan = crossover
          ? this.crossover(rng, ranked, credit)
          : this.mutation(rng, i === 0 && attempt < this.maxAttempts / 4 ? incumbent : this.tournament(rng, ranked), view.mode, credit, widen);
        if (!plan) continue;
        const raw = structuredClone(plan.parents[0].raw);
        const settings = { ...(raw.settings ?? {}) };
        const prompts = { ...(raw.prompts ?? {}) };
        for (const e of plan.edits) {
          if (e.dim.kind === 'knob') settings[e.dim.name] = e.to;
          else prompts[e.dim.name] = e.to as string;
        }
        // Only the edited sections are rewritten; FST plans hold prompt edits only, so settings stay as they are.
        if (plan.edits.some((e) => e.dim.kind === 'knob')) raw.settings = settings;
        if (plan.edits.some((e) => e.dim.kind === 'prompt')) raw.prompts = prompts;
        const parsed = HarnessManifest.safeParse(raw);
        if (!parsed.success) continue;
        const semantic = semanticKey(raw, parsed.data, plan.parents[0].code);
        if (semantics.has(semantic)) continue;
        rmSync(childDir, { recursive: true, force: true });
        cpSync(plan.parents[0].dir, childDir, { recursive: true });
        makeWritable(childDir);
        writeFileSync(join(childDir, 'harness.json'), JSON.stringify(raw, null, 2) + '\n');
        const hash = gitTreeHash(childDir);
        if (known.has(hash)) {
          rmSync(childDir, { recursive: true, force: true });
          continue;
        }
        known.add(hash);
        semantics.add(semantic);
        made = plan;
      }
      if (!made) {
        lines.push(`- child ${i + 1}: no new candidate within ${this.maxAttempts} tries (the neighbourhood of the chosen parents is exhausted)`);
        continue;
      }
      const hypothesis = this.hypothesis(view, made);
      out.push({ dir: childDir, parents: made.parents.map((p) => p.rec.treeHash), hypothesis });
      lines.push(`- \`r${req.round}-k${i}\` ← ${made.parents.map((p) => this.describe(p, ranked)).join(' × ')}: ${hypothesis}`);
    }
    const report = `${header}\nProposed ${out.length} of ${req.count}:\n${lines.join('\n')}\n`;
    return {
      candidates: out,
      report,
      dollars: 0,
      log: [{ kind: 'knob', seed: req.seed, round: req.round, proposed: out.map((c) => ({ parents: c.parents, hypothesis: c.hypothesis })) }],
    };
  }

  private async load(view: ArchiveView, rec: CandidateRecord): Promise<Loaded> {
    const dir = await view.materialize(rec.treeHash);
    const raw = JSON.parse(readFileSync(join(dir, 'harness.json'), 'utf8')) as RawManifest;
    const manifest = HarnessManifest.parse(raw);
    const code = codeSignature(dir);
    return { rec, dir, raw, manifest, code, semantic: semanticKey(raw, manifest, code) };
  }

  private rank(valid: Loaded[], version: string): Ranked[] {
    const rows: Ranked[] = valid.map((c) => {
      const now = this.scoreOf(c.rec, version);
      if (now) return { c, tier: 0, score: now };
      const older = c.rec.scores.filter((s) => s.split === this.split).at(-1) ?? c.rec.scores.at(-1);
      return older ? { c, tier: 1, score: older } : { c, tier: 2 };
    });
    return rows.sort(
      (a, b) =>
        a.tier - b.tier ||
        (b.score?.mean ?? 0) - (a.score?.mean ?? 0) ||
        (a.score?.meanTurns ?? 0) - (b.score?.meanTurns ?? 0) ||
        (a.c.rec.treeHash < b.c.rec.treeHash ? -1 : 1),
    );
  }

  private tournament(rng: Rng, ranked: Ranked[]): Ranked {
    const picks = Array.from({ length: Math.min(this.tournamentSize, ranked.length) }, () => rng.int(ranked.length));
    return ranked[Math.min(...picks)];
  }

  private mutation(
    rng: Rng,
    parent: Ranked,
    mode: 'full' | 'fst',
    credit: Credit,
    widen: number,
  ): { parents: Loaded[]; edits: Edit[]; crossover: boolean } | undefined {
    const m = parent.c.manifest;
    const dims = dimsOf(m, mode);
    if (dims.length === 0) return undefined;
    const n = Math.min(dims.length, (rng.chance(0.65) ? 1 : 2) + widen);
    const chosen: Dim[] = [];
    const pool = dims.slice();
    while (chosen.length < n) {
      const d = weightedPick(rng, pool, (x) => credit.dimWeight(dimKey(x)));
      chosen.push(d);
      pool.splice(pool.indexOf(d), 1);
    }
    const edits = chosen.map((d) => this.mutateDim(rng, m, d, credit)).filter((e): e is Edit => e !== undefined);
    return edits.length > 0 ? { parents: [parent.c], edits, crossover: false } : undefined;
  }

  private mutateDim(rng: Rng, m: HarnessManifest, d: Dim, credit: Credit): Edit | undefined {
    const from = valueOf(m, d);
    const field = dimKey(d);
    const spec = d.kind === 'knob' ? m.knobs[d.name] : undefined;
    let options: Value[];
    let base: (v: Value) => number = () => 1;
    if (spec?.type === 'int') {
      const step = rng.chance(0.7) ? 1 : 2;
      options = [(from as number) - step, (from as number) + step].filter((v) => v >= spec.min && v <= spec.max);
      if (options.length === 0) options = [(from as number) - 1, (from as number) + 1].filter((v) => v >= spec.min && v <= spec.max);
    } else {
      const values = domainOf(m, d);
      options = values.filter((v) => v !== from);
      // Ordered numeric enums: neighbours twice as likely as far values.
      if (spec?.type === 'enum' && values.every((v) => typeof v === 'number')) {
        const order: Value[] = values;
        const at = order.indexOf(from);
        base = (v) => (at >= 0 && Math.abs(order.indexOf(v) - at) === 1 ? 2 : 1);
      }
    }
    if (options.length === 0) return undefined;
    const to = weightedPick(rng, options, (v) => base(v) * credit.moveWeight({ field, from, to: v }));
    return { field, dim: d, from, to };
  }

  private crossover(rng: Rng, ranked: Ranked[], credit: Credit): { parents: Loaded[]; edits: Edit[]; crossover: boolean } | undefined {
    const a = this.tournament(rng, ranked);
    const mates = ranked.filter((r) => r !== a && r.c.code === a.c.code && canonicalJson(r.c.manifest.knobs) === canonicalJson(a.c.manifest.knobs));
    if (mates.length === 0) return undefined;
    const b = this.tournament(rng, mates);
    const edits: Edit[] = [];
    for (const e of editsBetween(a.c.manifest, b.c.manifest)) if (rng.chance(0.5)) edits.push(e);
    const total = editsBetween(a.c.manifest, b.c.manifest).length;
    if (edits.length === 0 || edits.length === total) {
      // The child would equal a parent: mutate it once more.
      const extra = this.mutation(rng, a, 'full', credit, 0);
      if (!extra) return undefined;
      for (const e of extra.edits) if (!edits.some((x) => x.field === e.field)) edits.push(e);
    }
    return { parents: [a.c, b.c], edits, crossover: true };
  }

  private hypothesis(view: ArchiveView, made: { parents: Loaded[]; edits: Edit[]; crossover: boolean }): string {
    const changes = made.edits.map((e) => `${e.dim.kind === 'knob' ? e.dim.name : `prompt ${e.dim.name}`} ${fmt(e.from)}→${fmt(e.to)}`).join(', ');
    const reasons = [...new Set(made.edits.map((e) => reasonFor(e)).filter(Boolean))];
    const evidence = this.evidence(view, made.parents[0]);
    const head = made.crossover ? `crossover of two good parents (${changes} from the second)` : changes;
    return `${head}: ${reasons.join('; ') || 'explore the neighbourhood of a good candidate'}${evidence ? ` (${evidence})` : ''}.`;
  }

  /** What the parent's per-task results say (terminations other than answered). */
  private evidence(view: ArchiveView, parent: Loaded): string {
    const s = this.scoreOf(parent.rec, view.policyVersion);
    if (!s) return '';
    const tasks = view.taskResults(s.keyHash);
    const terms: Record<string, number> = {};
    let total = 0;
    for (const t of tasks) {
      for (const [k, n] of Object.entries(t.terminations)) {
        terms[k] = (terms[k] ?? 0) + n;
        total += n;
      }
    }
    const parts = [`parent ${s.mean.toFixed(3)} ± ${s.se.toFixed(3)}, ${s.meanTurns.toFixed(1)} turns`];
    const worst = Object.entries(terms)
      .filter(([k]) => k !== 'answered')
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0];
    if (worst && total > 0) parts.push(`${Math.round((100 * worst[1]) / total)}% of its rollouts ended ${worst[0]}`);
    return parts.join('; ');
  }

  private describe(p: Loaded, ranked: Ranked[]): string {
    const r = ranked.find((x) => x.c === p);
    const s = r?.score ? `${r.score.mean.toFixed(3)}${r.tier === 1 ? ' (older policy)' : ''}` : 'unscored';
    return `\`${p.rec.treeHash.slice(0, 12)}\` (${s})`;
  }

  private header(req: ProposeRequest, records: CandidateRecord[], ranked: Ranked[], incumbent: Ranked | undefined, credit: Credit, skipped: string[]): string {
    const scoredNow = ranked.filter((r) => r.tier === 0);
    const best = scoredNow[0];
    const out = [
      `### Round ${req.round} — knob proposer (seed ${req.seed}, ${req.view.mode === 'fst' ? 'FST: prompt strings only' : 'settings and prompt variants'})`,
      `Archive: ${records.length} candidates, ${ranked.length} valid, ${scoredNow.length} scored under policy ${req.view.policyVersion}.`,
    ];
    if (incumbent) out.push(`Incumbent ${this.describe(incumbent.c, ranked)}${best && best !== incumbent ? `; best ${this.describe(best.c, ranked)}` : ''}.`);
    const helped = credit.summary();
    if (helped.length > 0) out.push(`Mean score change of past edits (count): ${helped.join(', ')}.`);
    if (skipped.length > 0) out.push(`Unreadable candidates skipped: ${skipped.join(', ')}.`);
    return out.join('\n') + '\n';
  }
}

function reasonFor(e: Edit): string {
  const hint = HINTS[e.dim.name];
  if (e.dim.kind === 'prompt')
    return e.to === ''
      ? `without a ${e.dim.name} text the model may follow its own habits better`
      : `a declared ${e.dim.name} text may tell the model what to do`;
  if (typeof e.from === 'number' && typeof e.to === 'number') {
    const up = e.to > e.from;
    return hint ? (up ? hint.up : hint.down) || hint.set || '' : `${up ? 'more' : 'less'} ${e.dim.name} may help`;
  }
  return hint?.set ?? `try ${e.dim.name} ${fmt(e.to)}`;
}

/** Copies of read-only views stay writable (owner write added, exec bits kept: they are part of the tree hash). */
function makeWritable(dir: string): void {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    const st = lstatSync(full);
    if (st.isDirectory()) makeWritable(full);
    else if ((st.mode & 0o200) === 0) chmodSync(full, (st.mode & 0o777) | 0o200);
  }
}

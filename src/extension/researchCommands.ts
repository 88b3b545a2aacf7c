// What a researcher opens from the trees: an archived candidate evaluated under a chosen policy and
// split (the real `whale eval` in a child process), two candidates scored the same way, a proposer
// session as a rendered document, a phase's candidates, an evaluation's transcripts. The models are
// vscode-free (model/proposerTranscript.ts, model/evaluationRollouts.ts); this file only asks and opens.
import * as vscode from 'vscode';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'jsonc-parser';
import { indexJsonl } from '../archive/jsonlIndex.js';
import { writeProposalSeed } from '../archive/proposalSeed.js';
import { ResultStore } from '../archive/resultStore.js';
import type { ArchiveTreeProvider } from './archiveView.js';
import { register } from './commandRegistry.js';
import { runEngine } from './engineProcess.js';
import { pickerItems, type CandidateNode } from './model/archiveModel.js';
import { evaluationRollouts, phaseCandidates } from './model/evaluationRollouts.js';
import { describeEvaluation, policyLabel, shortHash, type EvaluationSummary } from './model/identity.js';
import { parseSessionLog, renderProposerTranscript } from './model/proposerTranscript.js';
import type { PhaseNode, RunNode } from './model/runsModel.js';
import type { ApiKeys } from './secrets.js';
import type { WhaleStatusBar } from './statusBar.js';
import type { StoreMonitor } from './storeMonitor.js';
import type { TrajectoryRef } from './trajectories/ref.js';
import { requireProject, requireTrust } from './workspaceProject.js';

export interface ResearchDeps {
  log: vscode.LogOutputChannel;
  monitor: StoreMonitor;
  archive: ArchiveTreeProvider;
  statusBar: WhaleStatusBar;
  keys: ApiKeys;
}

/** The policy and split an evaluation runs under; `version` undefined: the backend's current one (base). */
export interface EvaluationChoice {
  version?: string;
  split: string;
}

export const PROPOSER_SCHEME = 'whale-proposer';

/** `whale-proposer:/<run>/<phase>/<round>/session.md`: a proposer session, rendered. */
export function proposerSessionUri(run: string, phase: number, round: number): vscode.Uri {
  return vscode.Uri.from({ scheme: PROPOSER_SCHEME, path: `/${run}/${phase}/${round}/session.md` });
}

export function registerResearchCommands(context: vscode.ExtensionContext, deps: ResearchDeps) {
  const { log, monitor, archive, statusBar } = deps;
  const cmd = (id: string, h: (...args: unknown[]) => unknown) => register(context, log, id, h);
  const runById = (id: string): RunNode => {
    const r = monitor.current().runs.find((x) => x.id === id);
    if (!r) throw new Error(`run ${id} is not in this project's run store`);
    return r;
  };
  const phaseOf = (run: RunNode, index: number): PhaseNode => {
    const p = run.cycles.flatMap((c) => c.phases).find((x) => x.index === index);
    if (!p) throw new Error(`run ${run.id} has no phase ${index}`);
    return p;
  };
  const hypothesisOf = (h: string) => archive.current().nodes.get(h)?.hypothesis;

  /** Asks which policy (named, the latest run's current one first) and which split to evaluate under. */
  const chooseEvaluation = async (title: string): Promise<EvaluationChoice | undefined> => {
    const policies = archive.current().policies;
    const current = monitor.current().runs[0]?.state?.version;
    const versions = [...policies.keys()].reverse().sort((a, b) => Number(b === current) - Number(a === current));
    const policy = versions.length
      ? await vscode.window.showQuickPick(
          versions.map((v) => ({
            label: policyLabel(v, policies),
            description: `${shortHash(v)}${v === current ? ' · the latest run is at this policy' : ''}`,
            version: v,
          })),
          { title: `${title} (1/2): under which policy?`, ignoreFocusOut: true },
        )
      : { version: undefined };
    if (!policy) return undefined;
    const split = await vscode.window.showQuickPick(
      [
        { label: 'val', detail: 'the validation split: what runs select the best pair on and report' },
        { label: 'harness', detail: "the search split: what the proposer's candidates are scored on" },
      ],
      { title: `${title} (2/2): on which split?`, ignoreFocusOut: true },
    );
    return split ? { version: policy.version, split: split.label } : undefined;
  };

  /** `whale eval --candidate HASH --policy V --split S --json` (the real engine, trusted workspaces only), progress in the status bar. */
  const evaluate = async (node: CandidateNode, choice: EvaluationChoice): Promise<EvaluationSummary> => {
    requireTrust('Evaluating a harness');
    const { root } = requireProject();
    const policies = archive.current().policies;
    const what = `evaluating ${shortHash(node.treeHash)} on ${choice.split} under ${choice.version ? policyLabel(choice.version, policies) : 'base'}`;
    statusBar.setActivity(what);
    try {
      const args = ['eval', '--config', 'whale.config.json', '--candidate', node.treeHash, '--split', choice.split, '--json'];
      if (choice.version) args.push('--policy', choice.version);
      const env = await deps.keys.env();
      const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: `WHALE: ${what}` }, (progress) =>
        runEngine(context.extensionPath, args, root, log, {
          env,
          onLine: (line) => {
            const m = /(\d+)\/(\d+) rollouts/.exec(line);
            if (m) {
              statusBar.setActivity(`${what}: ${m[1]}/${m[2]} rollouts`);
              progress.report({ message: `${m[1]}/${m[2]} rollouts` });
            }
          },
        }),
      );
      if (result.code !== 0) throw new Error(`evaluation failed (exit ${result.code}): ${result.stderr.trim().split('\n').slice(-1)[0] || 'see the log'}`);
      return JSON.parse(result.stdout) as EvaluationSummary;
    } finally {
      statusBar.setActivity(undefined);
    }
  };
  const announce = (node: CandidateNode, s: EvaluationSummary) =>
    `${shortHash(node.treeHash)}: ${describeEvaluation(s, archive.current().policies)}`.replace(` · harness ${shortHash(node.treeHash)}`, '');

  /** Evaluate from an archive row: policy and split asked (or given), the result named and added to the tree. */
  const evaluateArchived = async (node: CandidateNode, given?: EvaluationChoice): Promise<EvaluationSummary | undefined> => {
    const choice = given ?? (await chooseEvaluation(`WHALE: Evaluate ${shortHash(node.treeHash)}`));
    if (!choice) return undefined;
    const s = await evaluate(node, choice);
    await archive.reload();
    void vscode.window.showInformationMessage(`WHALE: ${announce(node, s)}`);
    return s;
  };

  // Scores side by side, rendered as a Markdown preview; refreshed when the archive view reloads (a new evaluation).
  const scoresChanged = new vscode.EventEmitter<vscode.Uri>();
  const openScores = new Set<string>();
  context.subscriptions.push(
    scoresChanged,
    archive.onDidChangeTreeData(() => {
      for (const u of openScores) scoresChanged.fire(vscode.Uri.parse(u));
    }),
  );

  cmd('whale.scoreBoth', async (a?: unknown, b?: unknown, given?: unknown) => {
    const nodes = [a, b].map((x) => (typeof x === 'string' ? archive.current().nodes.get(x) : (x as { node?: CandidateNode } | undefined)?.node));
    if (!nodes[0] || !nodes[1]) throw new Error('Score Both Under One Policy needs two archived candidates (run it from Compare Candidates)');
    const [x, y] = nodes as [CandidateNode, CandidateNode];
    const choice =
      (given as EvaluationChoice | undefined) ?? (await chooseEvaluation(`WHALE: Score ${shortHash(x.treeHash)} and ${shortHash(y.treeHash)} alike`));
    if (!choice) return undefined;
    // One after the other: an evaluation already in the run store is answered from it (0 new rollouts).
    const sx = await evaluate(x, choice);
    const sy = await evaluate(y, choice);
    await archive.reload();
    void vscode.window.showInformationMessage(`WHALE: ${announce(x, sx)} · ${announce(y, sy)}`);
    return [sx, sy];
  });

  // A proposer session, rendered: its model and cost, the candidates it wrote, the conversation with tool calls folded, its report.
  const transcript = (uri: vscode.Uri): string => {
    const [, runId, phase, round] = uri.path.split('/');
    const run = runById(runId);
    const p = phaseOf(run, Number(phase));
    const session = p.sessions?.find((s) => s.round === Number(round));
    if (!session) throw new Error(`run ${runId} phase ${phase} has no proposer session in round ${round}`);
    const store = monitor.current().project?.storeDir;
    const file = store && session.sessionLog ? join(store, 'runs', runId, session.sessionLog) : undefined;
    return renderProposerTranscript({
      run: runId,
      phase: p.index,
      session,
      log: file && existsSync(file) ? parseSessionLog(readFileSync(file, 'utf8')) : [],
      candidates: p.roundsDetail?.find((r) => r.round === session.round)?.candidates ?? [],
      hypothesisOf,
      policy: policyLabel(p.version, run.policies),
    });
  };
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(PROPOSER_SCHEME, {
      provideTextDocumentContent: (uri) => {
        try {
          return transcript(uri);
        } catch (e) {
          return `# This proposer session cannot be shown\n\n${(e as Error).message}\n`;
        }
      },
    }),
  );
  cmd('whale.openProposerSession', async (run?: unknown, phase?: unknown, round?: unknown) => {
    if (typeof run !== 'string' || typeof phase !== 'number' || typeof round !== 'number')
      throw new Error("open a proposer session from a round's row in the Runs view");
    const uri = proposerSessionUri(run, phase, round);
    const text = transcript(uri);
    await vscode.commands.executeCommand('markdown.showPreview', uri);
    return text;
  });

  // A harness phase's row: its candidates, accepted first, then by score; the pick opens its change against its parent.
  cmd('whale.showPhaseCandidates', async (runId?: unknown, index?: unknown) => {
    if (typeof runId !== 'string' || typeof index !== 'number') throw new Error("open a phase's candidates from its row in the Runs view");
    const run = runById(runId);
    const p = phaseOf(run, index);
    const picks = phaseCandidates(p, hypothesisOf);
    if (picks.length === 0) throw new Error(`phase ${index} of ${runId} scored no candidate yet`);
    const pick = await vscode.window.showQuickPick(picks, {
      title: `WHALE: phase ${index} (${p.kind}) of ${runId}: ${picks.length} candidate(s) under ${policyLabel(p.version, run.policies)}`,
      matchOnDescription: true,
    });
    if (!pick) return undefined;
    const node = archive.current().nodes.get(pick.treeHash);
    await vscode.commands.executeCommand(node?.parents.length ? 'whale.diffWithParent' : 'whale.openCandidate', pick.treeHash);
    return pick.treeHash;
  });

  // A phase's validation or the sealed test: its rollouts, failures first; the pick opens the transcript.
  cmd('whale.openEvaluationTranscripts', async (keyHash?: unknown, title?: unknown) => {
    if (typeof keyHash !== 'string') throw new Error("open an evaluation's transcripts from the Runs view (a phase or the sealed test)");
    const store = requireProject().storeDir;
    const file = new ResultStore(store).trajectoriesFile(keyHash);
    if (!existsSync(file)) throw new Error(`the evaluation ${keyHash.slice(0, 12)} has no transcripts in ${file}`);
    const picks = evaluationRollouts((await indexJsonl(file)).lines);
    const pick = await vscode.window.showQuickPick(picks, {
      title: `WHALE: ${typeof title === 'string' ? title : 'evaluation'}: ${picks.filter((p) => p.pass === false).length} of ${picks.length} rollouts failed`,
      matchOnDescription: true,
    });
    if (!pick) return undefined;
    const ref: TrajectoryRef = { store, keyHash, index: pick.line, id: pick.id, taskId: pick.taskId, sample: pick.sample };
    return vscode.commands.executeCommand('whale.openTrajectory', ref);
  });

  // The llm proposer seeded from a candidate: its next round derives from this one, not the incumbent
  // (archive/proposalSeed.ts; the harness phase hands it over and journals it with the proposal).
  cmd('whale.proposeWithLlm', async (arg?: unknown, directionArg?: unknown) => {
    const p = requireProject();
    const node =
      typeof arg === 'string'
        ? archive.current().nodes.get(arg)
        : ((arg as { node?: CandidateNode } | undefined)?.node ??
          (await vscode.window.showQuickPick(pickerItems(archive.current()), { title: 'WHALE: Propose from Here with the LLM…' }))?.node);
    if (!node) return undefined;
    const config = (parse(readFileSync(p.configFile, 'utf8')) ?? {}) as { search?: { proposer?: string } };
    const kind = config.search?.proposer ?? 'knob';
    if (kind !== 'llm')
      throw new Error(
        `search.proposer is '${kind}' in ${p.configFile}: this command seeds the llm proposer; set "search": {"proposer": "llm", "llm": {…}} first (Edit a Copy… is the hand-made way)`,
      );
    const direction =
      typeof directionArg === 'string'
        ? directionArg
        : await vscode.window.showInputBox({
            title: `WHALE: Propose from ${shortHash(node.treeHash)} with the LLM`,
            prompt: 'What should the proposer try from this candidate? (optional: empty lets it decide from the traces)',
            ignoreFocusOut: true,
          });
    if (direction === undefined) return undefined;
    const seed = writeProposalSeed(p.storeDir, { treeHash: node.treeHash, direction });
    void vscode.window
      .showInformationMessage(`WHALE: the llm proposer's next round starts from ${shortHash(node.treeHash)} instead of the incumbent.`, 'Next Phase')
      .then((c) => {
        if (c === 'Next Phase') void vscode.commands.executeCommand('whale.nextPhase');
      });
    return seed;
  });

  return {
    evaluateArchived,
    /** Tracks a scores document so a new evaluation redraws it. */
    scoresDocument(uri: vscode.Uri) {
      openScores.add(uri.toString());
    },
    onScoresChanged: scoresChanged.event,
  };
}

export type ResearchCommands = ReturnType<typeof registerResearchCommands>;

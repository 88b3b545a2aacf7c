import * as vscode from 'vscode';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { RunStore } from '../archive/runStore.js';
import { archiveOf, toUri } from './archiveFs.js';
import type { ArchiveItem, ArchiveTreeProvider } from './archiveView.js';
import { PhaseProcess, runEngine } from './engineProcess.js';
import { compareTable, pickerItems, scoresByVersion, sharedFigures, type CandidateNode } from './model/archiveModel.js';
import { configProblems } from './model/configProblems.js';
import { prepareProposalTypes } from './model/proposalTypes.js';
import { describeEvaluation, policyLabel, policyNames, shortHash, type EvaluationSummary } from './model/identity.js';
import type { EvaluationChoice, ResearchCommands } from './researchCommands.js';
import type { RunNode } from './model/runsModel.js';
import { engineEnv } from './proposerKey.js';
import { PROVIDERS, type ApiKeys } from './secrets.js';
import type { WhaleStatusBar } from './statusBar.js';
import type { StoreMonitor } from './storeMonitor.js';
import { register, type Handler } from './commandRegistry.js';
import { currentProject, requireProject, requireTrust, type WhaleProject } from './workspaceProject.js';

export interface CommandDeps {
  log: vscode.LogOutputChannel;
  monitor: StoreMonitor;
  archive: ArchiveTreeProvider;
  statusBar: WhaleStatusBar;
  keys: ApiKeys;
  research: ResearchCommands;
}

/** How long a stopping engine gets to reach its next safe point before it is terminated. */
const STOP_GRACE_MS = 60_000;

/** A phase needs a valid config; its problems are already in the Problems panel. */
function requireValidConfig(p: WhaleProject): void {
  if (!p.hasConfig) throw new Error('no whale.config.json in this folder: run WHALE: New Project first');
  const problems = configProblems(readFileSync(p.configFile, 'utf8'), p.configFile);
  if (problems.length)
    throw new Error(
      `whale.config.json has ${problems.length} problem(s) (see the Problems panel), e.g. ${problems[0].field ? problems[0].field + ': ' : ''}${problems[0].message}`,
    );
}

export function registerCommands(context: vscode.ExtensionContext, deps: CommandDeps): void {
  const { log, monitor } = deps;
  const cmd = (id: string, h: Handler) => register(context, log, id, h);
  let active: PhaseProcess | undefined;

  /** Runs `whale run|step …` detached, with a cancellable progress notification that follows it. */
  const startPhases = async (
    title: string,
    args: string[],
    opts: { asksNewRun?: boolean } = {},
  ): Promise<{ code: number | null; signal: string | null } | undefined> => {
    requireTrust(title);
    const p = requireProject();
    requireValidConfig(p);
    if (active) throw new Error('an engine started from this window is still running: stop it first (WHALE: Stop)');
    const running = monitor.current().runs.find((r) => r.status === 'running');
    if (running) throw new Error(`run ${running.id} is running in another engine (pid ${running.pid}); stop it first`);
    if (opts.asksNewRun && !(await confirmNewRun())) return undefined;
    const env = await engineEnv(p.configFile, deps.keys, log);
    deps.statusBar.setEngineError(undefined);
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `WHALE: ${title}`, cancellable: true },
      async (progress, token) => {
        const proc = new PhaseProcess(args, {
          extensionPath: context.extensionPath,
          cwd: p.root,
          logDir: join(p.storeDir, 'logs'),
          log,
          env,
          onLine: (l) => progress.report({ message: l }),
        });
        active = proc;
        if (proc.pid) monitor.ownPids.add(proc.pid);
        token.onCancellationRequested(() => {
          progress.report({ message: 'stopping at the next safe point…' });
          stopRuns();
          proc.stop(STOP_GRACE_MS).catch((e: Error) => log.warn(`engine: stopping failed: ${e.message}`));
        });
        try {
          const r = await proc.exited;
          monitor.tick(true);
          if (r.code === 0) return r;
          const reason = r.signal ? `was killed (${r.signal})` : `exited with code ${r.code}`;
          deps.statusBar.setEngineError(`the engine ${reason}`);
          log.error(`engine: whale ${args.join(' ')} ${reason}; output in ${proc.logFile}`);
          if (token.isCancellationRequested) return r;
          const choice = await vscode.window.showErrorMessage(
            `WHALE: the engine ${reason}. The run can be resumed without repeating paid work.`,
            'Resume Run',
            'Open Log',
          );
          if (choice === 'Resume Run') vscode.commands.executeCommand('whale.resumeRun');
          if (choice === 'Open Log') log.show();
          return r;
        } finally {
          active = undefined;
        }
      },
    );
  };

  /**
   * A command that would start a new run beside existing ones asks first (a finished run is never
   * continued silently by a new one): "Start a new run", or resume the run that can be resumed.
   */
  const confirmNewRun = async (): Promise<boolean> => {
    const runs = monitor.current().runs;
    if (runs.length === 0) return true;
    const latest = runs[0];
    const resumable = runs.find((r) => r.status === 'interrupted' || r.status === 'paused' || r.status === 'stopped');
    const NEW = 'Start a new run';
    const items = [
      { label: NEW, detail: `run ${latest.id} is ${latest.status}${latest.detail ? ` (${latest.detail})` : ''}; a new run starts from the base policy and h0` },
      ...(resumable ? [{ label: `Resume ${resumable.id}`, detail: `${resumable.status}: continue it instead` }] : []),
    ];
    const pick = await vscode.window.showQuickPick(items, { title: `WHALE: run ${latest.id} is ${latest.status}. Start a new run?`, ignoreFocusOut: true });
    if (pick && pick.label !== NEW && resumable) void vscode.commands.executeCommand('whale.resumeRun', { run: resumable });
    return pick?.label === NEW;
  };
  /** `{ newRun: true }` (automation, tests): start the new run without asking. */
  const skipsQuestion = (arg: unknown) => !!arg && typeof arg === 'object' && (arg as { newRun?: unknown }).newRun === true;

  /** Asks every running run of the store to stop at its next safe point (the run store's STOP control). */
  const stopRuns = (): string[] => {
    const p = currentProject();
    if (!p) return [];
    const store = new RunStore(p.storeDir);
    const ids = monitor
      .current()
      .runs.filter((r) => r.status === 'running')
      .map((r) => r.id);
    for (const id of ids) store.requestStop(id);
    return ids;
  };

  cmd('whale.showLogs', () => log.show());

  /** Arguments skip the questions (automation, tests): `{ domain, template, overwrite }`, or `{ own: { name, data? }, template }` for one's own task. */
  cmd('whale.newProject', async (arg?: unknown) => {
    const given = (arg && typeof arg === 'object' ? arg : {}) as {
      domain?: string;
      template?: string;
      overwrite?: boolean;
      own?: { name: string; data?: boolean };
    };
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) throw new Error('open an (empty) folder first: File → Open Folder');
    const root = folder.uri.fsPath;
    const hadConfig = existsSync(join(root, 'whale.config.json'));
    if (hadConfig && !given.overwrite) {
      const ok = await vscode.window.showWarningMessage('This folder already has a whale.config.json. Overwrite it?', { modal: true }, 'Overwrite');
      if (ok !== 'Overwrite') return undefined;
    }
    // `whale domains --json` lists the built-ins; listing never runs a domain's code.
    const listed = await runEngine(context.extensionPath, ['domains', '--json'], root, log);
    if (listed.code !== 0) throw new Error(`whale domains failed: ${listed.stderr.trim()}`);
    const { builtins } = JSON.parse(listed.stdout) as { builtins: { id: string; regime: string; title: string }[] };
    const OWN = 'My own task…';
    const domains = [
      ...builtins.map((d) => ({ label: d.id, description: d.regime, detail: d.title })),
      {
        label: OWN,
        description: 'your tasks, verifier and tools',
        detail: 'scaffolds domains/NAME with a worked example (code with defineDomain, or data only) and an h0 harness',
      },
    ];
    const domain = given.own
      ? { label: OWN }
      : given.domain
        ? domains.find((d) => d.label === given.domain)
        : await vscode.window.showQuickPick(domains, { title: 'WHALE: New Project (1/2): domain', placeHolder: 'the task domain the agent learns' });
    if (given.domain && !domain) throw new Error(`unknown domain '${given.domain}' (known: ${domains.map((d) => d.label).join(', ')})`);
    if (!domain) return undefined;
    let own = given.own;
    if (domain.label === OWN && !own) {
      const name = await vscode.window.showInputBox({
        title: 'WHALE: New Project: name of your task',
        placeHolder: 'my-task',
        validateInput: (v) => (/^[a-z0-9][a-z0-9_-]*$/.test(v) ? undefined : "lower-case letters, digits, '-' and '_'"),
      });
      if (!name) return undefined;
      const kind = await vscode.window.showQuickPick(
        [
          { label: 'code', detail: 'a TypeScript module with defineDomain: tasks, tools, verifier, rules, diagnostics' },
          { label: 'data', detail: 'no code: a task file (JSONL, CSV, Parquet), a verifier from the library, HTTP tools' },
        ],
        { title: 'WHALE: New Project: kind of domain' },
      );
      if (!kind) return undefined;
      own = { name, data: kind.label === 'data' };
    }
    const template = given.template
      ? { label: given.template }
      : await vscode.window.showQuickPick(
          [
            { label: 'tiny', detail: 'a phase in a minute or two on a laptop CPU: small splits, k = 1, a small budget' },
            { label: 'standard', detail: 'the embedded default: a whole two-cycle WHALE run in minutes to an hour on a CPU' },
          ],
          { title: 'WHALE: New Project (2/2): template' },
        );
    if (!template) return undefined;
    // One's own task is scaffolded by the same code as `whale domain new` (an existing config is switched to it).
    const args = own
      ? ['domain', 'new', own.name, ...(own.data ? ['--data'] : []), '--template', template.label, ...(hadConfig ? ['--use', '--force'] : [])]
      : ['init', '.', '--domain', domain.label, '--template', template.label, '--force'];
    const r = await runEngine(context.extensionPath, args, root, log);
    if (r.code !== 0) throw new Error(`whale ${args[0]} failed: ${r.stderr.trim() || r.stdout.trim()}`);
    const chosen = own ? own.name : domain.label;
    monitor.reset();
    await deps.archive.reload();
    const doc = await vscode.workspace.openTextDocument(join(root, 'whale.config.json'));
    await vscode.window.showTextDocument(doc, { preview: false });
    if (own)
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(join(root, 'domains', own.name, own.data ? 'domain.json' : 'index.ts')), {
        preview: false,
        viewColumn: vscode.ViewColumn.Beside,
      });
    vscode.window
      .showInformationMessage(
        `WHALE: project created (${chosen}, ${template.label}). ${own ? 'Make the domain yours, then `whale domain check`; ' : ''}Next: run one phase.`,
        'Next Phase',
      )
      .then((c) => {
        if (c === 'Next Phase') vscode.commands.executeCommand('whale.nextPhase');
      });
    return { root, domain: chosen, template: template.label };
  });

  // Continues the current run; once every run is finished, the next phase starts a new one.
  cmd('whale.nextPhase', (arg?: unknown) => {
    const runs = monitor.current().runs;
    const startsNew = runs.length > 0 && runs.every((r) => r.status === 'finished');
    return startPhases('next phase', startsNew ? ['step', '--new'] : ['step'], { asksNewRun: startsNew && !skipsQuestion(arg) });
  });
  // `whale run` always starts a new run (Resume Run continues one).
  cmd('whale.run', (arg?: unknown) => startPhases('run', ['run'], { asksNewRun: !skipsQuestion(arg) }));

  cmd('whale.resumeRun', async (arg?: unknown) => {
    const resumable = monitor.current().runs.filter((r) => r.status === 'interrupted' || r.status === 'paused' || r.status === 'stopped');
    let run: RunNode | undefined = (arg as { run?: RunNode } | undefined)?.run;
    if (!run) {
      if (resumable.length === 0) throw new Error('no run to resume: every run is finished or running');
      run =
        resumable.length === 1
          ? resumable[0]
          : (
              await vscode.window.showQuickPick(
                resumable.map((r) => ({ label: r.id, description: r.status, detail: r.detail, run: r })),
                { title: 'WHALE: Resume Run' },
              )
            )?.run;
    }
    if (!run) return undefined;
    if (run.status === 'finished' || run.status === 'running')
      throw new Error(`run ${run.id} is ${run.status}: there is nothing to resume${run.status === 'finished' ? ' (Next Phase or Run starts a new run)' : ''}`);
    return startPhases(`resume ${run.id}`, ['run', '--run', run.id]);
  });

  cmd('whale.stop', async () => {
    const ids = stopRuns();
    if (ids.length === 0 && !active) throw new Error('no run is running');
    vscode.window.showInformationMessage(`WHALE: asked ${ids.join(', ') || 'the engine'} to stop at the next safe point`);
    if (active) await active.stop(STOP_GRACE_MS);
    return ids;
  });

  // From an archive row (or the palette: a candidate picked from the archive), under a chosen policy
  // and split; from the Explorer, a harness folder as it is, under the backend's current policy.
  cmd('whale.evaluateCandidate', async (arg?: unknown, choice?: unknown) => {
    requireTrust('Evaluating a harness');
    const { root } = requireProject();
    const dir = arg instanceof vscode.Uri ? arg.fsPath : undefined;
    if (!dir) {
      const n = candidateArg(arg) ?? (await pickCandidate('WHALE: Evaluate Candidate'));
      return n ? deps.research.evaluateArchived(n, choice as EvaluationChoice | undefined) : undefined;
    }
    const env = await deps.keys.env();
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'WHALE: evaluating', cancellable: true },
      (progress, token) =>
        runEngine(context.extensionPath, ['eval', '--config', 'whale.config.json', '--harness', dir, '--json'], root, log, {
          token,
          env,
          onLine: (line) => progress.report({ message: line }),
        }),
    );
    if (result.code !== 0) throw new Error(`evaluation failed (exit ${result.code}): ${result.stderr.trim().split('\n').slice(-1)[0] ?? 'see the log'}`);
    const summary = JSON.parse(result.stdout) as EvaluationSummary;
    const names = new Map<string, string>();
    for (const r of monitor.current().runs) policyNames(monitor.entries(r.id), names);
    vscode.window.showInformationMessage(`WHALE: ${describeEvaluation(summary, names)}`);
    return summary;
  });

  // Candidates in the editor.
  // A candidate row of the archive tree, or a tree hash (a round's candidate in the Runs tree).
  const candidateArg = (arg: unknown): CandidateNode | undefined =>
    typeof arg === 'string'
      ? deps.archive.current().nodes.get(arg)
      : arg && typeof arg === 'object' && 'node' in arg
        ? (arg as Extract<ArchiveItem, { kind: 'candidate' }>).node
        : undefined;
  const pickCandidate = async (title: string, exclude?: string): Promise<CandidateNode | undefined> => {
    await deps.archive.reload();
    // Best latest score first, accepted and incumbent candidates marked.
    const items = pickerItems(deps.archive.current(), exclude);
    if (items.length === 0) throw new Error('the archive has no candidates yet');
    return (await vscode.window.showQuickPick(items, { title, matchOnDescription: true, matchOnDetail: true }))?.node;
  };
  const scoreLabel = (n: CandidateNode) => {
    const s = scoresByVersion(n).slice(-1)[0];
    return `${shortHash(n.treeHash)}${s ? ` (${(100 * s.mean).toFixed(1)}% under ${policyLabel(s.version, deps.archive.current().policies)})` : ''}`;
  };
  /** Opens the diff of two candidates: the one file that differs, or the user's pick among several. */
  const diffCandidates = async (a: CandidateNode, b: CandidateNode): Promise<string | undefined> => {
    const p = requireProject();
    const archive = await archiveOf(p.storeDir);
    const patch = await archive.diff(a.treeHash, b.treeHash, { context: 0 });
    const changed = [...new Set([...patch.matchAll(/^diff --git a\/(\S+) b\/(\S+)$/gm)].map((m) => m[2]))];
    if (changed.length === 0) {
      vscode.window.showInformationMessage(`WHALE: ${shortHash(a.treeHash)} and ${shortHash(b.treeHash)} are identical`);
      return undefined;
    }
    const file = changed.length === 1 ? changed[0] : await vscode.window.showQuickPick(changed, { title: `${changed.length} files differ: which one?` });
    if (!file) return undefined;
    await vscode.commands.executeCommand('vscode.diff', toUri(a.treeHash, file), toUri(b.treeHash, file), `${scoreLabel(a)} ↔ ${scoreLabel(b)} — ${file}`);
    return file;
  };
  const node = (h: string) => deps.archive.current().nodes.get(h);
  // Scores side by side, as a read-only Markdown document rendered from the archive model.
  const scoresUri = (a: string, b: string) => vscode.Uri.from({ scheme: 'whale-scores', path: `/${shortHash(a)}-${shortHash(b)}.md`, query: `${a},${b}` });
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider('whale-scores', {
      onDidChange: deps.research.onScoresChanged,
      provideTextDocumentContent(uri) {
        const [a, b] = uri.query.split(',').map(node);
        return a && b ? compareTable(a, b, deps.archive.current().policies) : 'one of these candidates is no longer in the archive view';
      },
    }),
  );

  cmd('whale.openCandidate', async (arg?: unknown) => {
    const n = candidateArg(arg) ?? (await pickCandidate('WHALE: Open Candidate'));
    if (!n) return undefined;
    const archive = await archiveOf(requireProject().storeDir);
    let entry = 'harness.json';
    try {
      const m = JSON.parse(await archive.readFile(n.treeHash, 'harness.json')) as { entry?: string };
      if (m.entry) entry = m.entry;
    } catch {
      // show the manifest (or its absence) instead
    }
    const doc = await vscode.workspace.openTextDocument(toUri(n.treeHash, entry));
    await vscode.window.showTextDocument(doc, { preview: true });
    return doc.uri.toString();
  });

  cmd('whale.diffWithParent', async (arg?: unknown) => {
    const n = candidateArg(arg) ?? (await pickCandidate('WHALE: Diff with Parent'));
    if (!n) return undefined;
    const parent = n.parents.map(node).find(Boolean);
    if (!parent) throw new Error(`${shortHash(n.treeHash)} has no parent in the archive (it is a root)`);
    return diffCandidates(parent, n);
  });

  cmd('whale.diffWithIncumbent', async (arg?: unknown) => {
    const n = candidateArg(arg) ?? (await pickCandidate('WHALE: Diff with Incumbent'));
    if (!n) return undefined;
    const latest = monitor.current().runs[0];
    const incumbent = latest?.state ? node(latest.state.harness) : undefined;
    if (!incumbent) throw new Error('no run has an incumbent harness yet');
    return diffCandidates(incumbent, n);
  });

  cmd('whale.compareCandidates', async (a?: unknown, b?: unknown) => {
    const first = candidateArg(a) ?? (await pickCandidate('WHALE: Compare Candidates (1/2)'));
    if (!first) return undefined;
    const second = candidateArg(b) ?? (await pickCandidate(`WHALE: Compare ${shortHash(first.treeHash)} with… (2/2)`, first.treeHash));
    if (!second) return undefined;
    const file = await diffCandidates(first, second);
    // The figures as a rendered preview beside the diff (redrawn when a new evaluation lands).
    const uri = scoresUri(first.treeHash, second.treeHash);
    deps.research.scoresDocument(uri);
    const scores = await vscode.workspace.openTextDocument(uri);
    await vscode.commands.executeCommand('markdown.showPreviewToSide', uri);
    const comparable = sharedFigures(first, second).length > 0;
    if (!comparable)
      void vscode.window
        .showInformationMessage(
          `WHALE: ${shortHash(first.treeHash)} and ${shortHash(second.treeHash)} were never measured on the same split under the same policy: their scores cannot be compared yet.`,
          'Score Both Under One Policy…',
        )
        .then((c) => {
          if (c) void vscode.commands.executeCommand('whale.scoreBoth', first.treeHash, second.treeHash);
        });
    return { file, scores: scores.getText(), comparable, uri: uri.toString() };
  });

  const proposals = context.workspaceState;
  cmd('whale.proposeFromHere', async (arg?: unknown, nameArg?: unknown) => {
    const n = candidateArg(arg) ?? (await pickCandidate('WHALE: Edit a Copy…'));
    if (!n) return undefined;
    const p = requireProject();
    const name =
      typeof nameArg === 'string'
        ? nameArg
        : await vscode.window.showInputBox({
            title: 'WHALE: Edit a Copy…',
            prompt: 'Name of the editable copy (under harnesses/proposals/)',
            value: `${shortHash(n.treeHash)}-edit`,
            validateInput: (v) =>
              !/^[A-Za-z0-9._-]+$/.test(v)
                ? 'letters, digits, . _ - only'
                : existsSync(join(p.root, 'harnesses', 'proposals', v))
                  ? 'a proposal with this name exists'
                  : undefined,
          });
    if (!name) return undefined;
    const dest = join(p.root, 'harnesses', 'proposals', name);
    await (await archiveOf(p.storeDir)).materialize(n.treeHash, dest);
    // The copy type-checks in the editor: a tsconfig beside it maps `whale-harness` to this extension's SDK.
    const sdk = [join(context.extensionPath, 'dist', 'whale-harness-sdk.ts'), join(context.extensionPath, 'src', 'harness', 'sdk.ts')].find((f) =>
      existsSync(f),
    );
    if (sdk) prepareProposalTypes(join(p.root, 'harnesses', 'proposals'), sdk);
    else log.warn('Edit a Copy: the whale-harness SDK is not in the extension (dist/whale-harness-sdk.ts): the copy will not type-check');
    // The parent is remembered outside the folder: a file inside would change the candidate's tree hash.
    await proposals.update(`whale.proposal.${dest}`, n.treeHash);
    const manifest = JSON.parse(readFileSync(join(dest, 'harness.json'), 'utf8')) as { entry?: string };
    await vscode.window.showTextDocument(vscode.Uri.file(join(dest, manifest.entry ?? 'harness.json')), { preview: false });
    vscode.window.showInformationMessage(`WHALE: edit ${relative(p.root, dest)}, then run "WHALE: Submit as Candidate" on it.`);
    return dest;
  });

  cmd('whale.submitCandidate', async (arg?: unknown, messageArg?: unknown) => {
    const p = requireProject();
    let dir = arg instanceof vscode.Uri ? arg.fsPath : typeof arg === 'string' ? arg : undefined;
    if (!dir) {
      const base = join(p.root, 'harnesses', 'proposals');
      const mine = existsSync(base) ? readdirSync(base).filter((d) => existsSync(join(base, d, 'harness.json'))) : [];
      if (mine.length === 0) throw new Error('no proposal folders under harnesses/proposals: use "WHALE: Edit a Copy…" on a candidate first');
      const pick = await vscode.window.showQuickPick(mine, { title: 'WHALE: Submit as Candidate' });
      if (!pick) return undefined;
      dir = join(base, pick);
    }
    if (!existsSync(join(dir, 'harness.json'))) throw new Error(`${dir} is not a harness folder (no harness.json)`);
    await vscode.workspace.saveAll(false);
    const message =
      typeof messageArg === 'string'
        ? messageArg
        : await vscode.window.showInputBox({
            title: 'WHALE: Submit as Candidate',
            prompt: 'Your hypothesis: what this change should fix (the commit message)',
            value: 'hand-made change',
          });
    if (message === undefined) return undefined;
    const parent = proposals.get<string>(`whale.proposal.${dir}`);
    const args = ['candidate', 'submit', dir, '--message', message, '--json', ...(parent ? ['--parents', parent] : [])];
    const r = await runEngine(context.extensionPath, args, p.root, log);
    if (r.code !== 0) throw new Error(`the folder was not accepted: ${r.stderr.trim().replace(/^whale candidate: (invalid input\n)?/, '')}`);
    const s = JSON.parse(r.stdout) as { treeHash: string; created: boolean };
    await deps.archive.reload();
    vscode.window
      .showInformationMessage(
        `WHALE: submitted ${shortHash(s.treeHash)}${s.created ? '' : ' (identical to an archived candidate)'}; the next harness phase validates and scores it.`,
        'Next Phase',
      )
      .then((c) => {
        if (c === 'Next Phase') vscode.commands.executeCommand('whale.nextPhase');
      });
    return s;
  });

  cmd('whale.setApiKey', async (providerArg?: unknown, keyArg?: unknown) => {
    const provider =
      typeof providerArg === 'string'
        ? PROVIDERS.find((x) => x.id === providerArg)
        : (
            await vscode.window.showQuickPick(
              PROVIDERS.map((x) => ({ label: x.label, description: `passed to the engine as ${x.env}`, provider: x })),
              { title: 'WHALE: Set API Key' },
            )
          )?.provider;
    if (!provider) return undefined;
    const key =
      typeof keyArg === 'string'
        ? keyArg
        : await vscode.window.showInputBox({
            title: `WHALE: ${provider.label} API key`,
            prompt: 'Stored in VS Code SecretStorage; given to the engine process as an environment variable only',
            password: true,
            ignoreFocusOut: true,
          });
    if (key === undefined) return undefined;
    if (key.trim() === '') {
      await deps.keys.clear(provider.id);
      vscode.window.showInformationMessage(`WHALE: ${provider.label} key removed`);
      return false;
    }
    await deps.keys.set(provider.id, key.trim());
    log.info(`secrets: a ${provider.label} key was stored (passed to the engine as ${provider.env})`);
    vscode.window.showInformationMessage(`WHALE: ${provider.label} key stored`);
    return true;
  });

  cmd('whale.refresh', async () => {
    monitor.reset();
    await deps.archive.reload();
  });
}

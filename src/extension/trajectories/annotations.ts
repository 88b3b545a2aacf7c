// Notes on trajectories: ONE comment controller on `whale-trajectory:` documents. A note made on
// lines inside a turn is about that turn, on the header about the whole trajectory. Notes are saved
// in the run store (archive/annotationStore.ts) — where the next harness phase hands them to the
// proposer — shown again whenever the document is opened, listed in the Annotations view, and
// deletable from the comment or the view.
import { userInfo } from 'node:os';
import * as vscode from 'vscode';
import { addAnnotation, annotationsFor, deleteAnnotation } from '../../archive/annotationStore.js';
import { RunStore } from '../../archive/runStore.js';
import { turnAt, turnLine } from '../../report/transcript.js';
import { fromUri, type TranscriptDocuments } from './documents.js';
import { TRAJECTORY_SCHEME } from './ref.js';
import { allNotes, runForNotes, type RunNote } from './store.js';

class NoteComment implements vscode.Comment {
  readonly mode = vscode.CommentMode.Preview;
  readonly contextValue = 'whale.note';
  readonly body: vscode.MarkdownString;
  readonly author: vscode.CommentAuthorInformation;
  readonly timestamp?: Date;
  readonly label: string;
  constructor(
    readonly note: RunNote,
    readonly thread: vscode.CommentThread,
  ) {
    this.body = new vscode.MarkdownString(note.text);
    this.author = { name: note.author ?? 'someone' };
    if (note.createdAt) this.timestamp = new Date(note.createdAt);
    this.label = `run ${note.runId}`;
  }
}

function author(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? 'someone';
  }
}

export class Annotations implements vscode.Disposable {
  readonly controller = vscode.comments.createCommentController('whale.annotations', 'WHALE notes');
  private readonly threads = new Map<string, vscode.CommentThread[]>();
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires after a note was saved or deleted (the Annotations view refreshes). */
  readonly onDidChange = this.changed.event;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly docs: TranscriptDocuments) {
    this.controller.options = {
      placeHolder: 'A note on this turn (on the header: on the whole trajectory). The proposer reads it.',
      prompt: 'Add a WHALE note',
    };
    this.controller.commentingRangeProvider = {
      provideCommentingRanges: (doc) => (doc.uri.scheme === TRAJECTORY_SCHEME ? [new vscode.Range(0, 0, Math.max(0, doc.lineCount - 1), 0)] : []),
    };
    // A document that is closed and opened again is rendered again, and its threads rebuilt then
    // (showNotes clears the old ones first), so nothing is torn down on close: VS Code also
    // "closes" a document when only its language changes.
    this.subscriptions.push(docs.onDidRender((uri) => this.showNotes(uri)));
  }

  /** The threads on a document, as (line, texts) — what the integration test reads back. */
  threadsOf(uri: vscode.Uri): { line: number; label?: string; notes: string[] }[] {
    return (this.threads.get(uri.toString()) ?? []).map((t) => ({
      line: t.range?.start.line ?? 0,
      label: t.label,
      notes: t.comments.map((c) => (c.body instanceof vscode.MarkdownString ? c.body.value : c.body)),
    }));
  }

  private clearThreads(uri: vscode.Uri): void {
    (this.threads.get(uri.toString()) ?? []).forEach((t) => t.dispose());
    this.threads.delete(uri.toString());
  }

  /** Redraws a transcript's threads from the store (after a note was added without the comment UI). */
  redraw(uri: vscode.Uri): void {
    this.showNotes(uri);
  }

  /**
   * Shows a transcript's notes from the store: one thread per line (a turn's header, or line 0 for
   * the whole trajectory). Threads already on screen are updated in place rather than recreated,
   * so an open comment widget is not torn down under the person typing in it.
   */
  private showNotes(uri: vscode.Uri): void {
    const open = this.docs.get(uri);
    if (!open) return;
    const notes = annotationsFor(allNotes(open.ref.store), open.trajectory.id) as RunNote[];
    const byLine = new Map<number, RunNote[]>();
    for (const n of notes) {
      const line = n.turn !== undefined ? (turnLine(open.transcript, n.turn) ?? 0) : 0;
      byLine.set(line, [...(byLine.get(line) ?? []), n]);
    }
    const existing = new Map((this.threads.get(uri.toString()) ?? []).map((t) => [t.range?.start.line ?? 0, t]));
    const list: vscode.CommentThread[] = [];
    for (const [line, thread] of existing) {
      if (!byLine.has(line)) thread.dispose();
    }
    for (const [line, ns] of byLine) {
      const thread = existing.get(line) ?? this.controller.createCommentThread(uri, new vscode.Range(line, 0, line, 0), []);
      const same = thread.comments.length === ns.length && thread.comments.every((c, i) => c instanceof NoteComment && c.note.id === ns[i].id);
      if (!same) thread.comments = ns.map((n) => new NoteComment(n, thread));
      thread.label = ns[0].turn !== undefined ? `turn ${ns[0].turn + 1}` : 'whole trajectory';
      thread.canReply = true;
      if (!existing.has(line)) thread.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
      list.push(thread);
    }
    this.threads.set(uri.toString(), list);
  }

  /** Saves a note from the comment UI (a reply to a new or existing thread). */
  async save(reply: { thread: vscode.CommentThread; text: string }): Promise<RunNote | undefined> {
    const { thread, text } = reply;
    const open = this.docs.get(thread.uri);
    if (!open) throw new Error('this transcript is not loaded any more: reopen it and write the note again');
    const range = thread.range ?? new vscode.Range(0, 0, 0, 0);
    const turn = turnAt(open.transcript, range.start.line, range.end.line);
    const note = await this.add(thread.uri, text, turn);
    if (!note) return undefined;
    const known = this.threads.get(thread.uri.toString()) ?? [];
    if (!known.includes(thread)) this.threads.set(thread.uri.toString(), [...known, thread]);
    thread.comments = [...thread.comments, new NoteComment(note, thread)];
    thread.label = turn !== undefined ? `turn ${turn + 1}` : 'whole trajectory';
    thread.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
    return note;
  }

  /** Saves a note on a transcript (turn: 0-based, or undefined for the whole trajectory). */
  async add(uri: vscode.Uri, text: string, turn: number | undefined): Promise<RunNote | undefined> {
    const open = this.docs.get(uri);
    if (!open) throw new Error(`not an open transcript: ${uri.toString()}`);
    const ref = fromUri(uri);
    const runId = await runForNotes(ref.store);
    if (!runId) return undefined;
    const t = open.trajectory;
    const note = addAnnotation(new RunStore(ref.store).runDir(runId), {
      text,
      harnessHash: t.harnessHash,
      taskId: t.taskId,
      trajectoryId: t.id,
      keyHash: ref.keyHash,
      ...(turn !== undefined ? { turn } : {}),
      author: author(),
    });
    this.changed.fire();
    return { ...note, runId };
  }

  /** Deletes a note given as a comment (from the comment's menu) or as a stored note. */
  remove(target: NoteComment | RunNote, store: string | undefined): boolean {
    const note = target instanceof NoteComment ? target.note : target;
    const storeDir = target instanceof NoteComment ? fromUri(target.thread.uri).store : store;
    if (!storeDir) throw new Error('no run store: open the project folder');
    const ok = deleteAnnotation(new RunStore(storeDir).runDir(note.runId), note.id);
    if (target instanceof NoteComment) {
      target.thread.comments = target.thread.comments.filter((c) => c !== target);
      if (target.thread.comments.length === 0) {
        const uri = target.thread.uri.toString();
        this.threads.set(
          uri,
          (this.threads.get(uri) ?? []).filter((t) => t !== target.thread),
        );
        target.thread.dispose();
      }
    } else {
      // Redraw any open transcript the note was shown on.
      for (const doc of vscode.workspace.textDocuments) if (doc.uri.scheme === TRAJECTORY_SCHEME) this.showNotes(doc.uri);
    }
    this.changed.fire();
    return ok;
  }

  dispose(): void {
    for (const uri of [...this.threads.keys()]) this.clearThreads(vscode.Uri.parse(uri));
    this.controller.dispose();
    this.changed.dispose();
    this.subscriptions.forEach((s) => s.dispose());
  }
}

type NoteNode = { note: RunNote; store: string };

/** The Annotations view: every live note in the store, newest first; a click opens its trajectory. */
export class AnnotationsProvider implements vscode.TreeDataProvider<NoteNode> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly storeDir: () => string | undefined) {}

  refresh(): void {
    this.changed.fire();
  }

  getChildren(node?: NoteNode): NoteNode[] {
    const store = this.storeDir();
    if (node || !store) return [];
    return allNotes(store)
      .reverse()
      .map((note) => ({ note, store }));
  }

  getTreeItem({ note, store }: NoteNode): vscode.TreeItem {
    const item = new vscode.TreeItem(note.text.split('\n')[0], vscode.TreeItemCollapsibleState.None);
    item.description = [note.taskId, note.turn !== undefined ? `turn ${note.turn + 1}` : 'whole', note.author].filter(Boolean).join(' · ');
    item.tooltip = new vscode.MarkdownString(
      `${note.text}\n\n— ${note.author ?? 'someone'}, ${note.createdAt}, run \`${note.runId}\`, trajectory \`${note.trajectoryId ?? '?'}\``,
    );
    item.iconPath = new vscode.ThemeIcon('note');
    item.contextValue = 'whale.note';
    if (note.keyHash && note.trajectoryId) {
      item.command = {
        command: 'whale.openTrajectory',
        title: 'Open Transcript',
        arguments: [{ store, keyHash: note.keyHash, index: 0, id: note.trajectoryId, taskId: note.taskId }],
      };
    }
    return item;
  }
}

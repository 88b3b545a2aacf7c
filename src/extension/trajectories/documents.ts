// The read-only `whale-trajectory:` documents: a URI names one line of an evaluation's
// trajectories file; opening it reads that line only (through the cached byte-offset index) and
// renders the transcript. The rendered transcript is kept per open document for the decorations,
// the hover and the comments, and dropped when the document closes.
import * as vscode from 'vscode';
import { findTrajectory, indexJsonl, readTrajectoryAt } from '../../archive/jsonlIndex.js';
import { ResultStore } from '../../archive/resultStore.js';
import type { Trajectory } from '../../core/trajectory.js';
import { renderTranscript, type Transcript } from '../../report/transcript.js';
import { TRAJECTORY_SCHEME, refFromParts, refToParts, type TrajectoryRef } from './ref.js';

export const TRANSCRIPT_LANGUAGE = 'whale-transcript';

/** Rendered transcripts kept for decorations, hovers and comments (the oldest are dropped). */
const MAX_KEPT = 64;

export function toUri(ref: TrajectoryRef): vscode.Uri {
  const { path, query } = refToParts(ref);
  return vscode.Uri.from({ scheme: TRAJECTORY_SCHEME, path, query });
}

export function fromUri(uri: vscode.Uri): TrajectoryRef {
  if (uri.scheme !== TRAJECTORY_SCHEME) throw new Error(`not a ${TRAJECTORY_SCHEME}: URI: ${uri.toString()}`);
  return refFromParts(uri.path, uri.query);
}

export interface OpenTrajectory {
  ref: TrajectoryRef;
  trajectory: Trajectory;
  transcript: Transcript;
  /** Milliseconds from the request to the rendered text (logged; the bench measures the same path). */
  ms: number;
}

/** Reads and renders the trajectory a reference names (one positioned read on a cached index). */
export async function loadTrajectory(ref: TrajectoryRef): Promise<OpenTrajectory> {
  const started = Date.now();
  const file = new ResultStore(ref.store).trajectoriesFile(ref.keyHash);
  const index = await indexJsonl(file);
  let line = ref.index;
  if (ref.id && index.lines[line]?.id !== ref.id) {
    line = findTrajectory(index, ref.id);
    if (line < 0) throw new Error(`trajectory ${ref.id} is not in ${file}`);
  }
  const trajectory = readTrajectoryAt(index, line);
  return { ref, trajectory, transcript: renderTranscript(trajectory), ms: Date.now() - started };
}

export class TranscriptDocuments implements vscode.TextDocumentContentProvider {
  private readonly open = new Map<string, OpenTrajectory>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  /** Fires when a transcript has been rendered (decorations and comments attach then). */
  private readonly rendered = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidRender = this.rendered.event;

  constructor(private readonly log: vscode.LogOutputChannel) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    try {
      const t = await loadTrajectory(fromUri(uri));
      this.open.delete(uri.toString());
      this.open.set(uri.toString(), t);
      // Keep the most recently rendered transcripts only (a Map iterates in insertion order).
      while (this.open.size > MAX_KEPT) this.open.delete(this.open.keys().next().value!);
      this.log.info(`trajectory ${t.trajectory.id} opened in ${t.ms} ms (${t.transcript.text.length} chars${t.transcript.clipped ? ', clipped' : ''})`);
      queueMicrotask(() => this.rendered.fire(uri));
      return t.transcript.text;
    } catch (e) {
      this.log.error(`cannot open ${uri.toString()}: ${(e as Error).message}`);
      return `# This trajectory cannot be shown\n\n${(e as Error).message}\n`;
    }
  }

  get(uri: vscode.Uri): OpenTrajectory | undefined {
    return this.open.get(uri.toString());
  }

  dispose(): void {
    this.changed.dispose();
    this.rendered.dispose();
  }
}

/** Opens a trajectory in a read-only editor with the transcript language. */
export async function showTrajectory(ref: TrajectoryRef, opts: { preview?: boolean } = {}): Promise<vscode.TextEditor> {
  const doc = await vscode.workspace.openTextDocument(toUri(ref));
  const typed = doc.languageId === TRANSCRIPT_LANGUAGE ? doc : await vscode.languages.setTextDocumentLanguage(doc, TRANSCRIPT_LANGUAGE);
  return vscode.window.showTextDocument(typed, { preview: opts.preview ?? true });
}

// Pass/fail, truncation and error marks on transcript editors, from the transcript's own marks
// (report/transcript.ts), plus the hover on a model call. What was applied to each document is
// remembered so an integration test can assert on the ranges, not just on "something rendered".
import * as vscode from 'vscode';
import { callDetails, segmentAt } from '../../report/transcript.js';
import { TRANSCRIPT_LANGUAGE, type TranscriptDocuments } from './documents.js';
import { TRAJECTORY_SCHEME } from './ref.js';

export interface AppliedMarks {
  pass: number[];
  fail: number[];
  truncated: number[];
  errors: number[];
}

export class TranscriptDecorations implements vscode.Disposable {
  private readonly types = {
    pass: vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor('diffEditor.insertedLineBackground'),
      overviewRulerColor: new vscode.ThemeColor('testing.iconPassed'),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
    }),
    fail: vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor('diffEditor.removedLineBackground'),
      overviewRulerColor: new vscode.ThemeColor('testing.iconFailed'),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
    }),
    truncated: vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor('inputValidation.warningBackground'),
      overviewRulerColor: new vscode.ThemeColor('editorWarning.foreground'),
      overviewRulerLane: vscode.OverviewRulerLane.Right,
      after: { contentText: '  ⟂ truncated', color: new vscode.ThemeColor('editorWarning.foreground') },
    }),
    errors: vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor('inputValidation.errorBackground'),
      overviewRulerColor: new vscode.ThemeColor('editorError.foreground'),
      overviewRulerLane: vscode.OverviewRulerLane.Right,
    }),
  };
  private readonly applied = new Map<string, AppliedMarks>();
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly docs: TranscriptDocuments) {
    this.subscriptions.push(
      vscode.window.onDidChangeVisibleTextEditors((editors) => editors.forEach((e) => this.decorate(e))),
      docs.onDidRender((uri) => vscode.window.visibleTextEditors.filter((e) => e.document.uri.toString() === uri.toString()).forEach((e) => this.decorate(e))),
      vscode.languages.registerHoverProvider(
        { scheme: TRAJECTORY_SCHEME, language: TRANSCRIPT_LANGUAGE },
        { provideHover: (doc, pos) => this.hover(doc, pos) },
      ),
    );
  }

  decorate(editor: vscode.TextEditor): void {
    if (editor.document.uri.scheme !== TRAJECTORY_SCHEME) return;
    const open = this.docs.get(editor.document.uri);
    if (!open) return;
    const m = open.transcript.marks;
    const marks: AppliedMarks = {
      pass: m.verdict.pass ? [m.verdict.line] : [],
      fail: m.verdict.pass ? [] : [m.verdict.line],
      truncated: m.truncated,
      errors: m.errors,
    };
    const lastLine = editor.document.lineCount - 1;
    for (const k of Object.keys(this.types) as (keyof AppliedMarks)[]) {
      editor.setDecorations(
        this.types[k],
        marks[k].filter((l) => l <= lastLine).map((l) => editor.document.lineAt(l).range),
      );
    }
    this.applied.set(editor.document.uri.toString(), marks);
  }

  /** The marks last applied to a document (for tests and for the status of the view). */
  marksOf(uri: vscode.Uri): AppliedMarks | undefined {
    return this.applied.get(uri.toString());
  }

  private hover(doc: vscode.TextDocument, pos: vscode.Position): vscode.Hover | undefined {
    const open = this.docs.get(doc.uri);
    if (!open) return undefined;
    const seg = segmentAt(open.transcript, pos.line);
    if (!seg || seg.call === undefined) return undefined;
    const call = open.trajectory.modelCalls[seg.call];
    if (!call) return undefined;
    const md = new vscode.MarkdownString(callDetails(call).join('\n'));
    return new vscode.Hover(md, new vscode.Range(seg.startLine, 0, seg.endLine, doc.lineAt(seg.endLine).text.length));
  }

  dispose(): void {
    Object.values(this.types).forEach((t) => t.dispose());
    this.subscriptions.forEach((s) => s.dispose());
  }
}

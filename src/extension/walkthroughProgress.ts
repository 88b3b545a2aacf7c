import * as vscode from 'vscode';

/**
 * The getting-started walkthrough checks its steps from the project's state (whale.hasProject,
 * whale.hasRun, whale.archive.*), through `onContext:` completion events. VS Code (1.139,
 * gettingStartedService) acts on such an expression only when a context change makes it true: one
 * already true when the walkthrough registers — and the Welcome service starts lazily, often long
 * after the project's state is known — is recorded as seen and never checks its step. So each step
 * lists its state under both values of `whale.walkthroughTick`, which alternates: whichever of the
 * two was false at registration turns true within a tick, and the step is checked.
 */
export function registerWalkthroughProgress(context: vscode.ExtensionContext): void {
  let tick = false;
  const flip = () => {
    tick = !tick;
    void vscode.commands.executeCommand('setContext', 'whale.walkthroughTick', tick ? 'b' : 'a');
  };
  flip();
  const timer = setInterval(flip, 1500);
  context.subscriptions.push({ dispose: () => clearInterval(timer) });
}

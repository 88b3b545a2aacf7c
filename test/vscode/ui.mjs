// What a person does in the workbench, with what they would wait for: the command palette, quick
// picks, input boxes, explorer and side-bar tree rows, context menus, notifications. Shared by
// test/vscode/walkthrough.mjs (the UI-only walkthrough CI runs) and scripts/ui-screenshots.mjs.
// Selectors are VS Code 1.139's workbench DOM (code-server 4.139.1 in headless Chromium).

const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Helpers bound to one Playwright page showing the workbench; `say` logs a line. */
export function workbenchUi(page, say = () => {}) {
  const explorerRow = (label) =>
    page.locator('.explorer-folders-view .monaco-list-row', { has: page.locator('.label-name', { hasText: new RegExp(`^${escapeRe(label)}$`) }) }).first();
  /** A view of the side bar by its title (Runs, Harness Archive, …). */
  const pane = (title) =>
    page.locator('.part.sidebar .pane', { has: page.locator('.pane-header', { hasText: new RegExp(`^\\s*${escapeRe(title)}`, 'i') }) }).first();
  const paneRow = (title, text) => pane(title).locator('.monaco-list-row', { hasText: text }).first();

  const ui = {
    page,
    explorerRow,
    pane,
    paneRow,
    // The palette lists what was registered when it opened: right after start-up the extension's
    // commands may not be there yet, so reopen it until the command shows (as a person would).
    async palette(command, timeout = 90_000) {
      const end = Date.now() + timeout;
      for (;;) {
        await page.keyboard.press('Escape'); // close whatever menu or widget has the focus
        await page.keyboard.press('F1');
        const input = page.locator('.quick-input-widget input');
        // With the focus in a webview (a Markdown preview, the dashboard) its keys reach the workbench
        // forwarded, and an Escape can land after the F1 and close the palette again: then try again.
        const typed = await input
          .fill(`>${command}`, { timeout: 10_000 })
          .then(() => true)
          .catch(() => false);
        // The row whose label is exactly the command: Enter would take the top row, which may be a
        // recently used command that merely matches ('WHALE: Run' matches 'WHALE: Resume Run').
        const row = page
          .locator('.quick-input-list .monaco-list-row', { has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${escapeRe(command)}\\s*$`) }) })
          .first();
        if (
          typed &&
          (await row.waitFor({ timeout: 5_000 }).then(
            () => true,
            () => false,
          ))
        )
          return row.click();
        if (Date.now() > end) throw new Error(`no '${command}' in the command palette after ${timeout / 1000}s`);
        await page.waitForTimeout(1_000);
      }
    },
    /** Clicks the quick pick row whose label starts with `label`. */
    async pick(label, timeout = 60_000) {
      const row = page
        .locator('.quick-input-widget .quick-input-list .monaco-list-row', {
          has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${escapeRe(label)}\\s*$`) }),
        })
        .first();
      await row.waitFor({ timeout });
      await row.click();
    },
    /** Types into the open input box (a password box too) and presses Enter; returns its title and whether it hid the text. */
    async answerInputBox(text, titlePattern, timeout = 60_000) {
      const widget = page.locator('.quick-input-widget', { hasText: titlePattern });
      await widget.waitFor({ state: 'visible', timeout });
      const input = widget.locator('input').first();
      const password = (await input.getAttribute('type')) === 'password';
      await input.fill(text);
      await page.keyboard.press('Enter');
      await widget.waitFor({ state: 'hidden', timeout: 30_000 });
      return { password };
    },
    async expandInExplorer(label) {
      const row = explorerRow(label);
      await row.waitFor({ timeout: 60_000 });
      if ((await row.getAttribute('aria-expanded')) !== 'true') await row.click();
    },
    async openFile(label, showing) {
      await explorerRow(label).dblclick();
      await page.locator('.editor-group-container .tab.active', { hasText: label }).waitFor({ timeout: 30_000 });
      await page.locator('.editor-group-container .monaco-editor .view-lines', { hasText: showing }).first().waitFor({ timeout: 60_000 });
    },
    /** Opens the WHALE side bar on the view `title`, the other views folded so its rows have room. */
    async showView(title) {
      if (!(await pane(title).isVisible())) await ui.palette('View: Show WHALE');
      const header = pane(title).locator('.pane-header').first();
      await header.waitFor({ timeout: 30_000 });
      const others = page.locator('.part.sidebar .pane-header[aria-expanded="true"]').filter({ hasNotText: new RegExp(`^\\s*${escapeRe(title)}`, 'i') });
      while ((await others.count()) > 0) await others.first().click();
      if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();
      return pane(title);
    },
    /** Expands a tree row (a click on its twistie, as a person would), again if a refresh folds it or it has no children yet. */
    async expandRow(row, timeout = 60_000) {
      const end = Date.now() + timeout;
      await row.waitFor({ timeout });
      for (;;) {
        const state = await row.getAttribute('aria-expanded');
        if (state === 'true') return;
        if (state === 'false') await row.locator('.monaco-tl-twistie').click();
        if (Date.now() > end) throw new Error(`the row '${(await row.textContent()).trim()}' did not expand in ${timeout / 1000}s`);
        await page.waitForTimeout(1_000);
      }
    },
    // Extension menu items appear only once the extension host has registered the extension, which
    // can take a while after the row shows: reopen the menu until the item is there.
    async contextMenu(row, item, timeout = 90_000) {
      const target = typeof row === 'string' ? explorerRow(row) : row;
      const end = Date.now() + timeout;
      for (;;) {
        await target.click({ button: 'right' });
        const entry = page.locator('.monaco-menu .action-item', { hasText: item }).first();
        if (
          await entry.waitFor({ timeout: 5_000 }).then(
            () => true,
            () => false,
          )
        ) {
          // Hover first: the menu takes the click only once the item is its focused one.
          await entry.hover();
          await entry.locator('.action-menu-item').first().click();
          await page
            .locator('.monaco-menu')
            .first()
            .waitFor({ state: 'hidden', timeout: 10_000 })
            .catch(() => page.keyboard.press('Enter'));
          return;
        }
        await page.keyboard.press('Escape');
        if (Date.now() > end) throw new Error(`no '${item}' in the context menu of '${typeof row === 'string' ? row : 'the row'}' after ${timeout / 1000}s`);
        await page.waitForTimeout(2_000);
      }
    },
    // VS Code 1.139's workbench raises notifications without a toast in this headless page; the
    // screen reader alert always carries the text. Then open the notification centre, as a person
    // would from the bell, so the picture shows it.
    async notification(text, timeout = 60_000) {
      const alert = page
        .locator('.monaco-alert', { hasText: text })
        .or(page.locator('.notification-toast', { hasText: text }))
        .first();
      await alert.waitFor({ state: 'attached', timeout });
      say(`notification: ${(await alert.textContent()).trim()}`);
      if (!(await page.locator('.notification-toast', { hasText: text }).first().isVisible())) {
        await ui.palette('Notifications: Show Notifications');
        await page.locator('.notifications-center .notification-list-item', { hasText: text }).first().waitFor({ timeout: 30_000 });
      }
    },
    /** Drags the side bar's edge: wider so tree rows show their descriptions whole, narrower so a diff has room for two sides. */
    async resizeSideBar(width) {
      const box = await page.locator('.part.sidebar').boundingBox();
      if (!box || Math.abs(box.width - width) < 10) return;
      const y = box.y + box.height / 2;
      await page.mouse.move(box.x + box.width + 1, y);
      await page.mouse.down();
      await page.mouse.move(box.x + width, y, { steps: 5 });
      await page.mouse.up();
    },
  };
  return ui;
}

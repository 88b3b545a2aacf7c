// Issue 12 §13: the backend commands respect Workspace Trust, and stored keys never reach an
// engine working for an untrusted folder's config (the vscode-free policy; backendCommands.ts applies it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { backendTrustRefusal, keysForEngine, TRUST_GATED_BACKEND_COMMANDS } from '../../src/extension/model/backendTrust.js';

test('check health, connect and launch on Ray refuse in an untrusted folder and run in a trusted one', () => {
  for (const id of ['whale.backend.checkHealth', 'whale.backend.connect', 'whale.backend.launchOnRay']) {
    assert.match(backendTrustRefusal(id, false) ?? '', /trust the workspace first/, id);
    assert.equal(backendTrustRefusal(id, true), undefined, id);
  }
  assert.equal(backendTrustRefusal('whale.backend.setApiKey', false), undefined, 'storing a key sends nothing anywhere');
});

test('stored keys go to the engine only for a trusted folder', () => {
  const stored = { TINKER_API_KEY: 'sk-secret' };
  assert.deepEqual(keysForEngine(false, stored), {});
  assert.deepEqual(keysForEngine(true, stored), stored);
});

test('every gated command is guarded where it is registered, and the engine env goes through keysForEngine', () => {
  const src = readFileSync(new URL('../../src/extension/backendCommands.ts', import.meta.url), 'utf8');
  for (const id of Object.keys(TRUST_GATED_BACKEND_COMMANDS)) assert.ok(src.includes(`'${id}'`), `${id} is registered`);
  assert.match(
    src,
    /const command = \(id: string, handler[^\n]*\n(?:[^\n]*\n){0,2}[^\n]*backendTrustRefusal\(id, vscode\.workspace\.isTrusted\)/,
    'the command wrapper checks trust before the handler',
  );
  assert.match(src, /keysForEngine\(vscode\.workspace\.isTrusted, await secretEnv\(context\)\)/);
});

// vscode-free: makes hand-edited copies under harnesses/proposals/ type-check in the editor. The
// SDK a candidate imports as `whale-harness` is an alias the bundler resolves; the editor's
// TypeScript needs a tsconfig that says so. Both files live beside the copies, never inside one
// (a file inside would change the candidate's tree hash).
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the SDK copy goes, relative to the proposals folder. */
export const PROPOSAL_SDK = join('.whale-sdk', 'whale-harness.ts');

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'ESNext',
    moduleResolution: 'Bundler',
    lib: ['ES2022'],
    types: [],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    paths: { 'whale-harness': [`./${PROPOSAL_SDK.replace(/\\/g, '/')}`] },
  },
  include: ['**/*.ts'],
};

/**
 * Copies the SDK (this extension's, so the types match the engine that will bundle the candidate)
 * and writes harnesses/proposals/tsconfig.json unless the user already has one there.
 */
export function prepareProposalTypes(proposalsDir: string, sdkFile: string): { tsconfig: string; written: boolean } {
  mkdirSync(join(proposalsDir, '.whale-sdk'), { recursive: true });
  copyFileSync(sdkFile, join(proposalsDir, PROPOSAL_SDK));
  const tsconfig = join(proposalsDir, 'tsconfig.json');
  if (existsSync(tsconfig)) return { tsconfig, written: false };
  writeFileSync(tsconfig, JSON.stringify(TSCONFIG, null, 2) + '\n');
  return { tsconfig, written: true };
}

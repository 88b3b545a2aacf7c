import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gitTreeHash } from '../../src/core/treeHash.js';

function gitWriteTree(dir: string): string {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();
  git('init', '-q');
  git('add', '-A');
  return git('write-tree');
}

test('gitTreeHash equals real git write-tree, including nested folders, order and exec bits', () => {
  const dir = mkdtempSync(join(tmpdir(), 'whale-tree-'));
  writeFileSync(join(dir, 'harness.json'), '{"name":"x"}\n');
  writeFileSync(join(dir, 'a.ts'), 'export {}\n');
  mkdirSync(join(dir, 'lib'));
  writeFileSync(join(dir, 'lib', 'util.ts'), 'export const x = 1;\n');
  writeFileSync(join(dir, 'lib.ts'), '// sorts before lib/ in git order\n');
  writeFileSync(join(dir, 'run.sh'), '#!/bin/sh\n');
  chmodSync(join(dir, 'run.sh'), 0o755);
  mkdirSync(join(dir, 'empty'));
  const ours = gitTreeHash(dir);
  assert.equal(ours, gitWriteTree(dir));
  assert.equal(gitTreeHash(dir), ours, 'the .git folder git created is not part of the identity');
});

test('one changed byte changes the identity', () => {
  const dir = mkdtempSync(join(tmpdir(), 'whale-tree-'));
  writeFileSync(join(dir, 'a.ts'), 'x');
  const before = gitTreeHash(dir);
  writeFileSync(join(dir, 'a.ts'), 'y');
  assert.notEqual(gitTreeHash(dir), before);
});

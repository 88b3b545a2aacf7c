import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../core/resources.js';

// scripts/build.mjs defines this in the bundle; from the sources it is read from package.json.
declare const __WHALE_VERSION__: string | undefined;

export function whaleVersion(): string {
  if (typeof __WHALE_VERSION__ === 'string') return __WHALE_VERSION__;
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

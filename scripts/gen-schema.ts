// Writes the JSON schema of whale.config.json (generated from the zod schema) for the editor's
// validation (package.json contributes.jsonValidation points at it).
import { writeFileSync } from 'node:fs';
import { z } from 'zod';
import { WhaleConfigSchema } from '../src/core/config.js';

export function configJsonSchema(): unknown {
  return {
    ...z.toJSONSchema(WhaleConfigSchema, { io: 'input', unrepresentable: 'any', target: 'draft-7' }),
    title: 'WHALE project configuration (whale.config.json)',
  };
}

if (process.argv[1]?.endsWith('gen-schema.ts')) {
  const out = new URL('../resources/whale.config.schema.json', import.meta.url);
  writeFileSync(out, JSON.stringify(configJsonSchema(), null, 2) + '\n');
  console.log(`wrote ${out.pathname}`);
}

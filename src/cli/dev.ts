// Runs the CLI from source (tsx), for development and tests: `npx tsx src/cli/dev.ts eval …`.
import { main } from './main.js';

process.exitCode = await main(process.argv.slice(2));

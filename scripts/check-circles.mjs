// `npm run lint` step: fails when a module of src/ reaches itself through its imports. Every edge
// counts — value and type imports, re-exports, dynamic import() — because a circle of any kind ties
// the modules into one room (a type circle today is a value circle after the next refactor).
// The TypeScript compiler's own scanner and resolver read the imports, as tsc resolves them.
// Prints each circle as a chain of files; exit 1 when there is one. Usage: node scripts/check-circles.mjs [DIR...]
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = process.cwd();
const dirs = (process.argv.length > 2 ? process.argv.slice(2) : ['src']).map((d) => resolve(root, d));
const { config } = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
const { options } = ts.parseJsonConfigFileContent(config, ts.sys, root);

function* sourceFiles(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* sourceFiles(p);
    else if (/\.(ts|mts|tsx)$/.test(e.name) && !e.name.endsWith('.d.ts')) yield p;
  }
}

const files = new Set(dirs.flatMap((d) => [...sourceFiles(d)]));
/** file → the files of the checked folders it imports. */
const edges = new Map();
for (const file of files) {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const to = new Set();
  for (const { fileName } of importedFiles) {
    const r = ts.resolveModuleName(fileName, file, options, ts.sys).resolvedModule;
    if (r && files.has(r.resolvedFileName)) to.add(r.resolvedFileName);
  }
  edges.set(file, [...to].sort());
}

// Tarjan's strongly connected components: every component of more than one file (or a file that
// imports itself) holds at least one circle.
let index = 0;
const idx = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const components = [];
function connect(v) {
  idx.set(v, index);
  low.set(v, index++);
  stack.push(v);
  onStack.add(v);
  for (const w of edges.get(v)) {
    if (!idx.has(w)) {
      connect(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
  }
  if (low.get(v) === idx.get(v)) {
    const c = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      c.push(w);
    } while (w !== v);
    if (c.length > 1 || edges.get(v).includes(v)) components.push(c);
  }
}
for (const f of [...files].sort()) if (!idx.has(f)) connect(f);

/** One shortest circle through `start` inside its component, for the message. */
function circleThrough(start, component) {
  const inside = new Set(component);
  const prev = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift();
    for (const w of edges.get(v)) {
      if (w === start) {
        const path = [v];
        while (prev.get(path[0]) !== null) path.unshift(prev.get(path[0]));
        return [...path, start];
      }
      if (inside.has(w) && !prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

const rel = (f) => relative(root, f);
if (components.length === 0) {
  console.log(`check-circles: no import circle among ${files.size} files of ${dirs.map(rel).join(', ')}`);
} else {
  for (const c of components) {
    const start = c.sort()[0];
    console.error(`import circle (${c.length} files): ${circleThrough(start, c).map(rel).join(' → ')}`);
  }
  console.error(`check-circles: ${components.length} import circle(s); break them by moving what both sides share into its own module`);
  process.exitCode = 1;
}

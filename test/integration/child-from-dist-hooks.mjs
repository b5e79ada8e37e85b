// Module hooks of child-from-dist.mjs (registered only beside a current build): a module of src/,
// as tsx resolves it (`../../src/run/index.js` to src/run/index.ts), is loaded from dist/ instead
// (dist/run/index.js), read as the ES module the build wrote, without passing through tsx.
import { readFile } from 'node:fs/promises';

let src = '';
let dist = '';

export function initialize(data) {
  src = data.src;
  dist = data.dist;
}

export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (!r.url.startsWith(src)) return r;
  return { url: dist + r.url.slice(src.length).replace(/\.ts$/, '.js'), format: 'module', shortCircuit: true };
}

export async function load(url, context, next) {
  if (!url.startsWith(dist)) return next(url, context);
  return { format: 'module', source: await readFile(new URL(url)), shortCircuit: true };
}

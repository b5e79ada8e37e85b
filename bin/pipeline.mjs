#!/usr/bin/env node
// Entry point for the `pipeline` command. It runs the compiled build, dist/bin.js (`npm run build`,
// which `npm ci` and `npm install` run as `prepare`), while that build is of src/ as it is now
// (bin/source-stamp.mjs: every file's time and size, ~10 ms). Otherwise (no build yet, a build
// that failed, or src/ edited since) it compiles the sources at start through tsx, installed with
// the package, as a checkout always did: slower to start, never older than the code.
// PIPELINE_FROM_SOURCE=1 takes the tsx path even beside a current build (the startup bench's
// comparison, or a stack trace that names the .ts lines).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIsCurrent } from './source-stamp.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
if (process.env.PIPELINE_FROM_SOURCE !== '1' && buildIsCurrent(join(root, 'src'), join(root, 'dist'))) {
  await import('../dist/bin.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/bin.ts');
}

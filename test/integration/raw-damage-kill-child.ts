// Child of raw-damage.test.ts: one `pipeline run` (the same runPipeline the CLI calls) that stops
// for good once N tasks are collected, before the run compacts its raw files: it prints "at N"
// and freezes its thread, and the parent kills it with SIGKILL there. Every answer collected by
// then is landed as its own file, indexed and loaded.
// Usage: node --import tsx raw-damage-kill-child.ts <pipeline file> <warehouse dir> <service url> <N>
import pino from 'pino';
import { loadPipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';

const [file, dir, url, n] = process.argv.slice(2) as [string, string, string, string];
const frozen = new Int32Array(new SharedArrayBuffer(4));
await runPipeline({
  pipeline: await loadPipeline(file),
  file,
  warehouseDir: dir,
  baseUrl: url,
  apiKey: process.env.SVC_API_KEY!,
  logger: pino({ level: 'silent' }),
  pollIntervalMs: 50,
  onProgress: (e) => {
    if (e.kind !== 'collect' || e.collected < Number(n)) return;
    process.stdout.write(`at ${e.collected}\n`); // a pipe: written before the next line runs
    Atomics.wait(frozen, 0, 0); // nothing after this runs: the parent kills this process here
  },
});
process.stdout.write('finished\n');

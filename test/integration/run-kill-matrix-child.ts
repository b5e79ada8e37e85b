// Child of run-kill-matrix.test.ts: one `pipeline run` (the same runPipeline, with the options the
// CLI gives it) that kills itself with SIGKILL at the point PIPELINE_TEST_KILL_AT names
// (`<step>:start` or `<step>:middle`, src/run/kill-point.ts), saying `killed at <step>:<phase>`
// on stdout first. Should it get past that point, it prints `finished` and exits 0.
// Usage: node --import tsx run-kill-matrix-child.ts <pipeline file> <warehouse dir> <service url> <lake url>
import pino from 'pino';
import { loadPipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';

const [file, dir, url, lake] = process.argv.slice(2) as [string, string, string, string];
await runPipeline({
  pipeline: await loadPipeline(file),
  file,
  warehouseDir: dir,
  baseUrl: url,
  apiKey: process.env.SVC_API_KEY!,
  logger: pino({ level: 'silent' }),
  pollIntervalMs: 20,
  lake,
});
process.stdout.write('finished\n');

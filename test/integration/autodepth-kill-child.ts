// Child of autodepth-resume.test.ts: one run of a pipeline file against the parent's emulator, on
// the parent's night (its clock at DATE 03:00 UTC); PIPELINE_TEST_KILL_AT stops it where the test says.
// Usage: node --import tsx autodepth-kill-child.ts <pipeline file> <warehouse dir> <service url> <date>
import { loadPipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { movingClock, silentLogger } from './helpers.js';

const [file, dir, url, date] = process.argv.slice(2) as [string, string, string, string];
await runPipeline({
  pipeline: await loadPipeline(file),
  file,
  warehouseDir: dir,
  baseUrl: url,
  apiKey: 'svc_live_testautodepth',
  logger: silentLogger,
  pollIntervalMs: 50,
  collectTimeoutMs: 30_000,
  now: movingClock(`${date}T03:00:00Z`),
  alerts: false,
});
process.stdout.write('finished\n');

// Child of alerts-crash.test.ts: runs the alert step of one run and stops for good between
// building the alerts and delivering them (prints "built" and waits to be killed).
// Usage: node --import tsx alerts-kill-child.ts <pipeline file> <warehouse dir> <run id> <now ISO>
import pino from 'pino';
import { alertStep } from '../../src/alerts/index.js';
import { loadPipeline } from '../../src/config/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';

const [file, dir, runId, nowIso] = process.argv.slice(2) as [string, string, string, string];
const pipeline = await loadPipeline(file);
await withWarehouse(dir, (wh) =>
  alertStep({
    wh,
    pipeline,
    runId,
    runState: 'completed',
    stopReason: null,
    estimateCny: null,
    now: () => new Date(nowIso),
    logger: pino({ level: 'silent' }),
    afterBuild: async (created) => {
      process.stdout.write(`built ${created}\n`);
      await new Promise(() => {}); // the parent kills this process here
    },
  }),
);
process.stdout.write('delivered\n');

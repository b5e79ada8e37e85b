import { afterEach, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, tempDir } from './helpers.js';

/** More `task_post` POSTs than this for two tasks is the loop of issue 43 (finding 5): the guard closes the emulator. */
const LOOP_GUARD = 40;

describe('a POST of one task refused with 40006 (issue 43, finding 5)', () => {
  let sandbox: SandboxHandle | undefined;
  let tmp: { dir: string; cleanup: () => Promise<void> } | undefined;
  afterEach(async () => {
    await sandbox?.close();
    await tmp?.cleanup();
    sandbox = undefined;
    tmp = undefined;
  });

  it('fails the task with the status, is never posted again in a loop, and nothing is charged', async () => {
    // An endpoint that takes no task at all in a POST: every task is answered 40006, even alone.
    sandbox = await startSandbox({ readyAfterMs: 0, admin: true, maxTasksPerPost: 0 });
    const sb = sandbox;
    tmp = await tempDir('pipeline-40006-');
    const posts = () => sb.log.filter((l) => l.path.endsWith('/task_post')).length;
    // Without the fix the run posts the same task forever: past the guard, the emulator goes
    // away, so the run ends (its POSTs find no service) and the count below fails the test.
    let guarded = false;
    const guard = setInterval(() => {
      if (posts() > LOOP_GUARD && !guarded) {
        guarded = true;
        sandbox = undefined;
        void sb.close();
      }
    }, 5);
    try {
      const summary = await runPipeline({
        pipeline: parsePipeline(
          `name: refused\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [alpha, beta]\n`,
          'refused.yaml',
          {},
        ),
        file: 'refused.yaml',
        warehouseDir: tmp.dir,
        baseUrl: sb.url,
        apiKey: 'svc_live_testrefused40006',
        logger: silentLogger,
        pollIntervalMs: 5,
        limits: { windowMs: 1000 },
        models: false,
      });
      expect(guarded).toBe(false);
      // Two tasks in one POST (both refused), then each alone once (refused again): three POSTs.
      expect(posts()).toBe(3);
      expect(summary.tasks.failed).toBe(2);
      expect(summary.tasks.collected).toBe(0);
      expect(sb.balanceCny()).toBe('1000.0000');
      await withWarehouse(tmp.dir, async (wh) => {
        const rows = await wh.all<{ state: string; status_code: number; status_message: string }>(
          `SELECT state, status_code, status_message FROM tasks ORDER BY tag`,
        );
        expect(rows.map((r) => [r.state, r.status_code])).toEqual([
          ['failed', 40006],
          ['failed', 40006],
        ]);
        expect(rows[0]!.status_message).toMatch(/refused alone in its POST/);
      });
    } finally {
      clearInterval(guard);
    }
  });
});

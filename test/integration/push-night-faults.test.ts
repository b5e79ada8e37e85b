import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { expectEachCollectedOnce, pushPipeline, pushWorld } from './push-helpers.js';

const SECRET = 'night-faults-secret-0123';
const TASKS = 400;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe("an agency's night by push, at small size, with the service's faults and a receiver restart", () => {
  it('completes through the ready list, errors and webhook_resend: 0 lost, 0 bought twice, each loaded once', async () => {
    // 1% of postbacks never arrive (the service's callback failure), 1% arrive twice.
    const w = await pushWorld({ faults: { callbackFailure: 0.01, callbackDuplicate: 0.01 }, seed: 5 });
    const port = await freePort();
    const pipeline = pushPipeline(TASKS, ['mode: push', `listen: "127.0.0.1:${port}"`]);

    // The receiver goes down mid-night: the run is stopped once a quarter of the postbacks are in...
    const stop = new AbortController();
    const watch = setInterval(() => {
      void w.stats().then((s) => {
        if (s.callbacks.delivered >= TASKS / 4) stop.abort();
      });
    }, 20);
    const first = await w.run(pipeline, { callbackSecret: SECRET, signal: stop.signal }).finally(() => clearInterval(watch));
    expect(first.state).not.toBe('completed');
    const between = await w.stats();
    expect(between.callbacks.delivered).toBeLessThan(TASKS);

    // ...and comes back at the same address: the postbacks sent while it was down failed, so the
    // night is finished through the ready list and errors + webhook_resend (free).
    const second = await w.run(pipeline, { callbackSecret: SECRET });
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');

    const stats = await w.stats();
    expect(stats.faults_injected.callback_failure ?? 0).toBeGreaterThan(0);
    expect(stats.faults_injected.callback_duplicate ?? 0).toBeGreaterThan(0);
    expect(stats.callbacks.failed).toBeGreaterThan(0);
    // The tasks whose postbacks failed came by a free recovery call: errors + webhook_resend, the
    // ready list, or task_get of a task the resumed run still owed (which one depends on timing).
    const recovery = ['/errors', '/appendix/webhook_resend', '/tasks_ready', '/task_get'].map((p) => w.calls(p));
    expect(
      recovery.reduce((a, b) => a + b, 0),
      `errors, webhook_resend, tasks_ready, task_get: ${recovery.join(', ')}`,
    ).toBeGreaterThan(0);
    // Posted once (4 POSTs of 100), nothing bought twice, every task collected and loaded once.
    expect(w.calls('/task_post')).toBe(TASKS / 100);
    await expectEachCollectedOnce(w, TASKS, expect);
  });
});

import { describe, expect, it } from 'vitest';
import { expectEachCollectedOnce, pushPipeline, pushWorld } from './push-helpers.js';

describe('push collection recovers what the callbacks did not bring', () => {
  it('finds failed callbacks through errors and has them resent: every task collected once, none bought twice', async () => {
    const w = await pushWorld({ faults: { callbackFailure: 0.4 }, seed: 3 });
    const summary = await w.run(pushPipeline(60));
    expect(summary.state).toBe('completed');
    const stats = await w.stats();
    expect(stats.faults_injected.callback_failure).toBeGreaterThan(5);
    expect(w.calls('/serp/errors')).toBeGreaterThan(0);
    expect(w.calls('/appendix/webhook_resend')).toBeGreaterThan(0);
    // A task is fetched only after its callback failed three times (one send, two resends).
    expect(w.calls('/task_get/')).toBeLessThan(stats.faults_injected.callback_failure! / 3 + 1);
    expect(w.calls('/task_post')).toBe(1);
    await expectEachCollectedOnce(w, 60, expect);
    expect(w.notes.find((n) => n.startsWith('push:'))).toMatch(/[1-9]\d* resent/);
  });

  it('fetches with task_get the tasks whose callbacks keep failing after two resends', async () => {
    const w = await pushWorld({ faults: { callbackFailure: 1 } });
    const summary = await w.run(pushPipeline(20));
    expect(summary.state).toBe('completed');
    expect((await w.stats()).callbacks).toEqual({ delivered: 0, failed: 60 }); // sent, resent, resent again
    expect(w.calls('/task_get/')).toBe(20);
    await expectEachCollectedOnce(w, 20, expect);
  });

  it('fetches at once a task whose postback our server refused as too large (413), without a resend', async () => {
    const w = await pushWorld();
    const summary = await w.run(pushPipeline(10, ['mode: push', 'listen: "127.0.0.1:0"', 'max_unzipped_mb: 0.001']));
    expect(summary.state).toBe('completed');
    expect(w.calls('/appendix/webhook_resend')).toBe(0);
    expect(w.calls('/task_get/')).toBe(10);
    expect(w.notes.find((n) => n.startsWith('push:'))).toMatch(/refused 10x413/);
    await expectEachCollectedOnce(w, 10, expect);
    await w.db(async (wh) => {
      const [r] = await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM raw_responses WHERE request_id IS NULL`);
      expect(r!.n).toBe(0); // no postback was landed
    });
  });

  it('stops waiting when callbacks stop coming, closes the server and pulls the rest', async () => {
    const w = await pushWorld({ readyAfterMs: 2_000 });
    // 0.005 minutes = 300 ms without a callback: the tasks are not done by then.
    const summary = await w.run(pushPipeline(8, ['mode: push', 'listen: "127.0.0.1:0"', 'callback_wait_minutes: 0.005']));
    expect(summary.state).toBe('completed');
    expect(w.notes.find((n) => n.startsWith('push:'))).toMatch(/8 left \(stalled\)/);
    // The server was closed, so each callback failed and its task joined the ready list.
    expect((await w.stats()).callbacks).toEqual({ delivered: 0, failed: 8 });
    expect(w.calls('/tasks_ready')).toBeGreaterThan(0);
    await expectEachCollectedOnce(w, 8, expect);
  });
});

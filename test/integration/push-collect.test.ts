import { describe, expect, it } from 'vitest';
import { planPipeline } from '../../src/plan/index.js';
import { replay } from '../../src/warehouse/index.js';
import { expectEachCollectedOnce, pushPipeline, pushWorld } from './push-helpers.js';

describe('push collection against the emulator on loopback', () => {
  it('collects every task from its gzip postback, polls no ready list and buys nothing twice', async () => {
    const w = await pushWorld();
    const pipeline = pushPipeline(250);
    const summary = await w.run(pipeline);
    expect(summary.state).toBe('completed');
    expect(summary.tasks).toEqual({ planned: 250, posted: 250, failed: 0, collected: 250, pending: 0 });
    expect(w.calls('/task_post')).toBe(3);
    expect(w.calls('/tasks_ready')).toBe(0);
    // Each result came by postback; a task is fetched only after its callback failed three
    // times (none do unless this machine is too busy to answer within the 10 seconds).
    const { callbacks } = await w.stats();
    expect(callbacks.delivered).toBeGreaterThanOrEqual(250 - w.calls('/task_get/'));
    expect(w.calls('/task_get/')).toBeLessThanOrEqual(callbacks.failed / 3);
    await expectEachCollectedOnce(w, 250, expect);
    // The tags are the planned ones: the callback URL (with its secret) is not part of them.
    const planned = planPipeline(pipeline, summary.runId)
      .tasks.map((t) => t.tag)
      .sort();
    expect(Object.keys((await w.stats()).tasks_created_by_tag).sort()).toEqual(planned);
    await w.db(async (wh) => {
      const [s] = await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM tasks WHERE spec::VARCHAR LIKE '%postback%'`);
      expect(s!.n).toBe(0); // the state keeps the task as planned; the secret lives only in this process
      const [raw] = await wh.all<{ n: number; tasks: number }>(
        `SELECT count(*)::INT AS n, count(DISTINCT t)::INT AS tasks FROM (SELECT unnest(task_ids) AS t FROM raw_responses WHERE kind = 'serp' AND request_id IS NULL)`,
      );
      expect(raw!.tasks).toBe(250 - w.calls('/task_get/')); // each postback landed raw (no request id: the service called us)
    });
    expect(w.notes.some((n) => /push: 2\d\d postback\(s\)/.test(n))).toBe(true);
    // The landed postbacks are a raw landing like any other: replay rebuilds the same rows.
    await w.db(async (wh) => {
      const before = await wh.all(`SELECT task_id, keyword, items_count FROM serp_results ORDER BY task_id`);
      const r = await replay(wh, { table: 'serp_results' });
      expect(r.reindexed).toBe(0); // every landed file was indexed
      expect(await wh.all(`SELECT task_id, keyword, items_count FROM serp_results ORDER BY task_id`)).toEqual(before);
    });
  });

  it('with pingback, takes each ping and fetches the task with task_get', async () => {
    const w = await pushWorld();
    const summary = await w.run(pushPipeline(30, ['mode: push', 'callback: pingback', 'listen: "127.0.0.1:0"']));
    expect(summary.state).toBe('completed');
    expect(w.calls('/task_get/advanced/')).toBe(30);
    expect(w.calls('/tasks_ready')).toBe(0);
    await expectEachCollectedOnce(w, 30, expect);
  });

  it('auto pulls without a public URL, and pushes when one is given on the command line', async () => {
    const pulled = await pushWorld();
    const a = await pulled.run(pushPipeline(5, ['mode: auto']));
    expect(a.state).toBe('completed');
    expect(pulled.calls('/task_get/')).toBe(5);
    expect((await pulled.stats()).callbacks.delivered).toBe(0);

    const pushed = await pushWorld();
    const port = await freePort();
    const b = await pushed.run(pushPipeline(5, ['mode: auto']), {
      collection: { listen: `127.0.0.1:${port}`, publicUrl: `http://127.0.0.1:${port}/etl` },
    });
    expect(b.state).toBe('completed');
    expect(pushed.calls('/task_get/')).toBe(0);
    expect((await pushed.stats()).callbacks.delivered).toBe(5);
  });
});

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

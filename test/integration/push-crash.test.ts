import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { endpoint } from '../../src/catalog/index.js';
import { CallbackServer, InFlight } from '../../src/collect/index.js';
import { expectEachCollectedOnce, pushPipeline, pushWorld } from './push-helpers.js';

const SECRET = 'crash-test-secret-0123';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe('a callback acknowledged but never loaded (the process died in between)', () => {
  it('is loaded by the next run from its landed body, without fetching the task again', async () => {
    let t = Date.parse('2026-11-20T09:00:00Z');
    const now = () => new Date(t);
    const w = await pushWorld({ readyAfterMs: 60_000 }, now);
    const port = await freePort();
    const pipeline = pushPipeline(5, ['mode: push', `listen: "127.0.0.1:${port}"`]);

    // Run 1 posts with callbacks, then its collection deadline passes before any task is done.
    const first = await w.run(pipeline, { collectTimeoutMs: 0, callbackSecret: SECRET });
    expect(first.state).toBe('partial');
    expect(first.tasks).toMatchObject({ posted: 5, collected: 0 });

    // The same process comes back to life only long enough to land and acknowledge the
    // callbacks (so the service counts them delivered and keeps them off the ready list),
    // then dies before loading anything.
    const ids = await w.db((wh) => wh.all<{ tag: string; task_id: string }>(`SELECT tag, task_id FROM tasks`));
    const posted = new InFlight();
    posted.sending(
      ids.map((r) => r.tag),
      endpoint('serp.engA.organic.task_get.advanced'),
    );
    posted.answered(
      ids.map((r) => r.tag),
      ids.map((r) => ({ tag: r.tag, taskId: r.task_id })),
    );
    posted.recorded(ids.map((r) => r.task_id));
    const landed: string[] = [];
    const server = await CallbackServer.start({
      host: '127.0.0.1',
      port,
      secret: SECRET,
      warehouseDir: w.dir,
      runId: first.runId,
      pipeline: pipeline.name,
      maxBodyBytes: 1 << 20,
      maxUnzippedBytes: 1 << 24,
      inFlight: posted,
      callback: 'postback',
      onLanded: (c) => landed.push(c.taskId),
      onPinged: () => {},
      now,
    });
    t += 61_000;
    await w.sb.flushCallbacks();
    await server.close();
    expect(landed.sort()).toEqual(ids.map((r) => r.task_id).sort());
    expect((await w.stats()).callbacks).toEqual({ delivered: 5, failed: 0 });

    // Run 2 resumes the run: the landed bodies are indexed and loaded; nothing is fetched.
    const second = await w.run(pipeline, { collection: { mode: 'pull' } });
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(w.calls('/task_get/')).toBe(0);
    expect(w.calls('/tasks_ready')).toBe(0);
    expect(w.notes.some((n) => /5 task\(s\) already landed/.test(n))).toBe(true);
    await expectEachCollectedOnce(w, 5, expect);
  });
});

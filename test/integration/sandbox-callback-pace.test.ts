import { describe, expect, it } from 'vitest';
import { harness, SERP, serpTask } from './sandbox-harness.js';
import { receiver } from './sandbox-receiver.js';

describe('sandbox: callback pace and repeats', () => {
  it('keeps at most callbackConcurrency postbacks under way, sending the next as one is answered', async () => {
    let open = 0;
    let most = 0;
    const rx = await receiver(() => {
      open++;
      most = Math.max(most, open);
      setTimeout(() => open--, 30);
      return { status: 200, delayMs: 30 };
    });
    const { call, advance, sb } = await harness({ admin: true, callbackConcurrency: 3 });
    const body = Array.from({ length: 12 }, (_, i) =>
      serpTask(`pace ${i}`, { postback_url: `${rx.url}/post/$id`, postback_data: 'advanced' }),
    );
    await call('POST', `${SERP}/task_post`, { body });
    advance(300);
    await sb.flushCallbacks();
    expect(rx.seen).toHaveLength(12);
    expect(most).toBeLessThanOrEqual(3);
    expect(most).toBeGreaterThan(1);
    const stats = (await call('GET', '/__admin/stats')).body;
    expect(stats.callbacks).toEqual({ delivered: 12, failed: 0 });
  });

  it('sends a delivered postback a second time under the callbackDuplicate fault', async () => {
    const rx = await receiver();
    const { call, advance, sb } = await harness({ admin: true, faults: { callbackDuplicate: 1 } });
    const post = await call('POST', `${SERP}/task_post`, {
      body: [serpTask('twice', { postback_url: `${rx.url}/post/$id`, postback_data: 'advanced' })],
    });
    const id = post.body.tasks[0].id;
    advance(300);
    await sb.flushCallbacks();
    expect(rx.seen.map((r) => r.url)).toEqual([`/post/${id}`, `/post/${id}`]);
    expect(rx.seen[1]!.json).toEqual(rx.seen[0]!.json);
    const stats = (await call('GET', '/__admin/stats')).body;
    expect(stats.faults_injected.callback_duplicate).toBe(1);
    expect(stats.callbacks).toEqual({ delivered: 1, failed: 0 });
  });
});

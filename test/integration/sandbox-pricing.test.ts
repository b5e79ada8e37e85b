import { describe, expect, it } from 'vitest';
import { harness, LIVE_KEY, SERP, serpTask, type Json } from './sandbox-harness.js';

const LONG_TAIL = 'waterproof trail running shoes for wide feet'; // 7 words: only 20-50 organic results exist
const cny = (s: string | undefined) => Math.round(Number(s) * 10_000);

describe('sandbox: price rules', () => {
  it('refunds unused depth of a live call at once: the charge header is the net price', async () => {
    const { call, sb } = await harness();
    const before = cny(sb.balanceCny());
    const r = await call('POST', `${SERP}/live/advanced`, { key: LIVE_KEY, body: [serpTask(LONG_TAIL, { depth: 100 })] });
    const organic = r.body.tasks[0].result[0].items.filter((i: Json) => i.type === 'organic').length;
    expect(organic).toBeGreaterThanOrEqual(20);
    expect(organic).toBeLessThan(100);
    const blocks = Math.ceil((organic - 10) / 10);
    const expected = Math.floor(((43 + 32 * blocks) * 33 + 5) / 10); // live = 3.3 x standard
    expect(cny(r.headers['x-svc-charge-cny'])).toBe(expected);
    expect(before - cny(sb.balanceCny())).toBe(expected);
  });

  it('refunds unused depth of a standard task to the balance when it is done, before any task_get', async () => {
    const { call, advance, sb } = await harness();
    const before = cny(sb.balanceCny());
    const post = await call('POST', `${SERP}/task_post`, { key: LIVE_KEY, body: [serpTask(LONG_TAIL, { depth: 100 })] });
    expect(post.headers['x-svc-charge-cny']).toBe('0.0331'); // 0.0043 + 9 blocks x 0.0032, charged at creation
    expect(before - cny(sb.balanceCny())).toBe(331); // not done yet: nothing back
    advance(300);
    const done = cny(sb.balanceCny()); // done, never collected: the refund is in
    const got = await call('GET', `${SERP}/task_get/advanced/${post.body.tasks[0].id}`, { key: LIVE_KEY });
    const organic = got.body.tasks[0].result[0].items.filter((i: Json) => i.type === 'organic').length;
    const net = 43 + 32 * Math.ceil((organic - 10) / 10);
    expect(before - done).toBe(net);
    expect(before - cny(sb.balanceCny())).toBe(net);
    expect(got.body.tasks[0].cost).toBeLessThan(post.body.tasks[0].cost); // the net cost is how a client sees it
    await call('GET', `${SERP}/task_get/advanced/${post.body.tasks[0].id}`, { key: LIVE_KEY });
    expect(before - cny(sb.balanceCny())).toBe(net); // refunded once
  });

  it('charges more for priority 2 and for live than for standard, and events tasks about 0.0240', async () => {
    const { call } = await harness();
    const charge = async (path: string, task: Json) =>
      cny((await call('POST', path, { key: LIVE_KEY, body: [task] })).headers['x-svc-charge-cny']);
    const std = await charge(`${SERP}/task_post`, serpTask('desk lamp'));
    expect(await charge(`${SERP}/task_post`, serpTask('desk lamp', { priority: 2 }))).toBeGreaterThan(std);
    expect(await charge(`${SERP}/live/advanced`, serpTask('desk lamp'))).toBeGreaterThan(std);
    expect(await charge('/v3/serp/engA/events/task_post', { keyword: 'concerts', location_code: 2840 })).toBe(240);
  });

  it('answers extra tasks of a POST with 40006 (task_post) or 40000 (live), uncharged, in every family', async () => {
    const { call } = await harness();
    const posts: Array<[string, Json]> = [
      ['/v3/merchant/engA/products/task_post', { keyword: 'kettle', location_code: 2840 }],
      ['/v3/keywords_data/engA_ads/search_volume/task_post', { keywords: ['kettle'], location_code: 2840 }],
      ['/v3/serp/engA/events/task_post', { keyword: 'concerts', location_code: 2840 }],
    ];
    for (const [path, task] of posts) {
      const r = await call('POST', path, { key: LIVE_KEY, body: Array.from({ length: 101 }, () => task) });
      const codes = r.body.tasks.map((t: Json) => t.status_code);
      expect(
        codes.slice(0, 100).every((c: number) => c === 20100),
        path,
      ).toBe(true);
      expect(codes[100], path).toBe(40006);
      expect(r.body.tasks_error).toBe(1);
    }
    const live = await call('POST', '/v3/svc_labs/engA/related_keywords/live', {
      key: LIVE_KEY,
      body: [{ keyword: 'a' }, { keyword: 'b' }],
    });
    expect(live.body.tasks.map((t: Json) => t.status_code)).toEqual([20000, 40000]);
  });

  it('refuses a POST the balance cannot cover in any family (402), creating and charging nothing', async () => {
    const { call, sb } = await harness({ balanceCny: '0.0100' });
    const r = await call('POST', '/v3/backlinks/referring_domains/live', { key: LIVE_KEY, body: [{ target: 'example.org' }] });
    expect(r.status).toBe(402);
    expect(r.body.status_code).toBe(40200);
    expect(sb.balanceCny()).toBe('0.0100');
  });
});

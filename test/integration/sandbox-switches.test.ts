import { gunzipSync, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { sandboxOptionsFromArgs } from '../../src/cli/commands/sandbox.js';
import { parseReadings } from '../../src/sandbox/index.js';
import { harness, LIVE_KEY, SERP, serpTask, T0, type Json } from './sandbox-harness.js';
import { receiver } from './sandbox-receiver.js';

/**
 * Each switchable reading of readings.ts (issue 44, item 3) served over HTTP: the default and
 * every other value, side by side. The money and crash tests of the client run under each.
 */

const LONG_TAIL = 'waterproof trail running shoes for wide feet'; // 7 words: only 20-50 organic results exist
const cny = (s: string | undefined) => Math.round(Number(s) * 10_000);
const stamp = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace(/:/g, '-').slice(0, 19) + ' +00:00';
const codes = (r: { body: Json }) => r.body.tasks.map((t: Json) => t.status_code);

describe('asyncTasksPerPost: "the sandbox text states production asynchronous POST takes 1 task, while other endpoint texts state 100"', () => {
  it('100 (default): the 101st task of a POST gets 40006, the first 100 are created', async () => {
    const { call } = await harness();
    const body = Array.from({ length: 101 }, (_, i) => serpTask(`kw ${i}`));
    const r = await call('POST', `${SERP}/task_post`, { body });
    expect(codes(r).filter((c: number) => c === 20100)).toHaveLength(100);
    expect(codes(r)[100]).toBe(40006);
  });

  it('1: only the first task of a POST is created and charged, the others get 40006; events task_post keeps its own 100', async () => {
    const { call, sb } = await harness({ readings: 'asyncTasksPerPost=1' });
    const before = cny(sb.balanceCny());
    const r = await call('POST', `${SERP}/task_post`, { key: LIVE_KEY, body: [serpTask('a'), serpTask('b'), serpTask('c')] });
    expect(codes(r)).toEqual([20100, 40006, 40006]);
    expect(r.body.tasks[1].status_message).toBe('You can set no more than 1 task at a time.');
    expect(cny(r.headers['x-svc-charge-cny'])).toBe(43);
    expect(before - cny(sb.balanceCny())).toBe(43);
    const kw = await call('POST', '/v3/keywords_data/engA_ads/search_volume/task_post', {
      body: [1, 2].map((i) => ({ keywords: [`k${i}`], location_code: 2840, language_code: 'en' })),
    });
    expect(codes(kw)).toEqual([20100, 40006]);
    const events = await call('POST', '/v3/serp/engA/events/task_post', { body: [serpTask('concerts'), serpTask('festivals')] });
    expect(codes(events)).toEqual([20100, 20100]);
  });
});

describe('extraDepthPrice: "A `depth` above 10 can add charges per additional block of 10 results" (amount not said)', () => {
  it('0.75 (default), 1 and 0 (flat): the charge header and the task cost carry the price served; refunds at the same block price', async () => {
    const seen: Record<string, { charge: number; refund: number }> = {};
    for (const price of ['0.75', '1', '0']) {
      const { call, sb, advance } = await harness({ readings: { extraDepthPrice: Number(price) as 0.75 } });
      const deep = await call('POST', `${SERP}/task_post`, { key: LIVE_KEY, body: [serpTask('coffee', { depth: 30 })] });
      const before = cny(sb.balanceCny());
      const longTail = await call('POST', `${SERP}/task_post`, { key: LIVE_KEY, body: [serpTask(LONG_TAIL, { depth: 100 })] });
      const charged = cny(longTail.headers['x-svc-charge-cny']);
      advance(300);
      await call('GET', `${SERP}/task_get/advanced/${longTail.body.tasks[0].id}`, { key: LIVE_KEY });
      seen[price] = { charge: cny(deep.headers['x-svc-charge-cny']), refund: charged - (before - cny(sb.balanceCny())) };
      expect(Math.round(deep.body.tasks[0].cost * 10_000)).toBeGreaterThan(0);
    }
    expect(seen['0.75']!.charge).toBe(43 + 2 * 32);
    expect(seen['1']!.charge).toBe(43 + 2 * 43);
    expect(seen['0']!.charge).toBe(43);
    // 20-50 organic results served of 100: whole blocks come back at the block price of the reading.
    expect(seen['0.75']!.refund % 32).toBe(0);
    expect(seen['0.75']!.refund).toBeGreaterThan(0);
    expect(seen['1']!.refund % 43).toBe(0);
    expect(seen['1']!.refund / 43).toBe(seen['0.75']!.refund / 32);
    expect(seen['0']!.refund).toBe(0); // flat: nothing charged for depth, nothing to refund
  });
});

describe('clockSkew: whose "now" bounds id_list `datetime_to` ("not after now")', () => {
  const query = (toMs: number) => [{ datetime_from: stamp(T0 - 3_600_000), datetime_to: stamp(toMs) }];

  it('0 (default): the Date header is the clock given, and a datetime_to of that clock is taken', async () => {
    const { call } = await harness();
    const r = await call('POST', '/v3/serp/id_list', { body: query(T0) });
    expect(new Date(r.headers.date!).getTime()).toBe(T0);
    expect(codes(r)).toEqual([20000]);
  });

  it('-120s: the emulator runs two minutes behind (its Date header says so); the client’s own now is refused, now less the skew is taken', async () => {
    const { call } = await harness({ readings: 'clockSkew=-120s' });
    const r = await call('POST', '/v3/serp/id_list', { body: query(T0) });
    expect(new Date(r.headers.date!).getTime()).toBe(T0 - 120_000);
    expect(codes(r)).toEqual([40501]);
    expect(r.body.tasks[0].status_message).toMatch(/not be later than now/);
    expect(codes(await call('POST', '/v3/serp/id_list', { body: query(T0 - 120_000) }))).toEqual([20000]);
  });

  it('+120s: the emulator runs ahead; tasks are stamped on its clock, so a window ending at the client’s now misses a task just posted', async () => {
    const { call } = await harness({ readings: { clockSkew: 120 } });
    const post = await call('POST', `${SERP}/task_post`, { body: [serpTask('a')] });
    expect(new Date(post.headers.date!).getTime()).toBe(T0 + 120_000);
    const mine = await call('POST', '/v3/serp/id_list', { body: query(T0) });
    expect([codes(mine), mine.body.tasks[0].result]).toEqual([[20000], []]);
    const theirs = await call('POST', '/v3/serp/id_list', { body: query(T0 + 120_000) });
    expect(theirs.body.tasks[0].result.map((t: Json) => [t.id, t.datetime_posted])).toEqual([
      [post.body.tasks[0].id, '2026-03-02 08:02:00 +00:00'],
    ]);
  });

  it('is read as signed seconds or minutes, within a day; the CLI takes it with every other switch', () => {
    expect(parseReadings('clockSkew=-120s').clockSkew).toBe(-120);
    expect(parseReadings('clockSkew=+2m').clockSkew).toBe(120);
    expect(parseReadings('clockSkew=0').clockSkew).toBe(0);
    expect(() => parseReadings('clockSkew=2h')).toThrow(/whole number of seconds/);
    expect(() => parseReadings('clockSkew=90000')).toThrow(/-86400 to 86400/);
    // `pipeline sandbox --reading ...` takes every switchable name.
    const args = {
      port: 0,
      host: '127.0.0.1',
      seed: 1,
      'ready-after': 2,
      balance: '1',
      faults: 'none',
      'time-scale': 1,
      admin: false,
      'rate-limits': true,
    };
    const all =
      'asyncTasksPerPost=1,extraDepthPrice=0,clockSkew=-120s,aiCreatedStatus=20000,aiZero=removed,readyListPaging=100,postbackEncoding=deflate';
    expect(sandboxOptionsFromArgs({ ...args, reading: all }).options.readings).toMatchObject({
      asyncTasksPerPost: 1,
      extraDepthPrice: 0,
      clockSkew: -120,
      aiCreatedStatus: 20000,
      aiZero: 'removed',
      readyListPaging: 100,
      postbackEncoding: 'deflate',
    });
  });
});

describe('.ai variants: the task-creation status and whether 0 is "empty"', () => {
  it('aiCreatedStatus 20100 (default) or 20000: the top-level status of POST task_post.ai; a refusal keeps its code', async () => {
    for (const [reading, code] of [
      [undefined, 20100],
      ['aiCreatedStatus=20000', 20000],
    ] as const) {
      const { call } = await harness(reading ? { readings: reading } : {});
      const r = await call('POST', `${SERP}/task_post.ai`, { body: [serpTask('coffee')] });
      expect([r.body.status_code, r.body.id]).toEqual([code, expect.stringMatching(/^[0-9a-f-]{36}$/)]);
      const bad = await call('POST', `${SERP}/task_post.ai`, { body: [serpTask('coffee', { depth: 701 })] });
      expect(bad.body.status_code).toBe(40501);
    }
  });

  it('aiZero kept (default) or removed: a field whose value is 0 stays in, or leaves, the .ai items', async () => {
    const zeros = (v: unknown): number =>
      v === 0 ? 1 : v && typeof v === 'object' ? Object.values(v).reduce((n: number, x) => n + zeros(x), 0) : 0;
    const body = [{ target: 'example.com', location_code: 2840, language_code: 'en' }];
    const kept = await (await harness()).call('POST', '/v3/svc_labs/engA/ranked_keywords/live.ai', { body });
    const removed = await (
      await harness({ readings: 'aiZero=removed' })
    ).call('POST', '/v3/svc_labs/engA/ranked_keywords/live.ai', { body });
    expect(zeros(kept.body.items)).toBeGreaterThan(0);
    expect(kept.body.items[0].ranked_serp_element.serp_item.rank_info.page_rank).toBe(0);
    expect(zeros(removed.body.items)).toBe(0);
    expect(removed.body.items[0].ranked_serp_element.serp_item.rank_info).not.toHaveProperty('page_rank');
    expect(removed.body.items).toHaveLength(kept.body.items.length);
  });
});

describe('readyListPaging: the ready list\'s size per call ("Request and response shapes of `tasks_ready` ... : not shown")', () => {
  const post150 = async (call: Awaited<ReturnType<typeof harness>>['call']) => {
    for (const from of [0, 75])
      await call('POST', `${SERP}/task_post`, { body: Array.from({ length: 75 }, (_, i) => serpTask(`kw ${from + i}`)) });
  };
  const ready = async (call: Awaited<ReturnType<typeof harness>>['call']) =>
    ((await call('GET', `${SERP}/tasks_ready`)).body.tasks[0].result as Json[]).map((t) => t.id as string);

  it('1000 (default): 150 ready tasks in one call', async () => {
    const { call, advance } = await harness();
    await post150(call);
    advance(300);
    expect(await ready(call)).toHaveLength(150);
  });

  it('100: one call lists 100, the rest once those are collected; a client reading one page a pass still collects all', async () => {
    const { call, advance } = await harness({ readings: 'readyListPaging=100' });
    await post150(call);
    advance(300);
    const first = await ready(call);
    expect(first).toHaveLength(100);
    expect(await ready(call)).toEqual(first); // no paging field: the same page until collected
    for (const id of first) await call('GET', `${SERP}/task_get/advanced/${id}`);
    const second = await ready(call);
    expect(second).toHaveLength(50);
    expect(second.filter((id) => first.includes(id))).toEqual([]);
    expect(() => parseReadings('readyListPaging=0')).toThrow(/1 to 1000/);
    expect(() => parseReadings('readyListPaging=1001')).toThrow(/1 to 1000/);
  });
});

describe('postbackEncoding: a postback is a "gzip-compressed" POST', () => {
  it('gzip (default) with Content-Encoding: gzip; gzip-bare, the same bytes without it; deflate with Content-Encoding: deflate', async () => {
    const bodies: Record<string, { encoding: string | undefined; json: Json }> = {};
    for (const enc of ['gzip', 'gzip-bare', 'deflate'] as const) {
      const hook = await receiver();
      const { call, advance, sb } = await harness({ readings: { postbackEncoding: enc } });
      const post = await call('POST', `${SERP}/task_post`, {
        body: [serpTask('coffee', { postback_url: `${hook.url}/pb?id=$id`, postback_data: 'advanced' })],
      });
      advance(300);
      await sb.flushCallbacks();
      expect(hook.seen).toHaveLength(1);
      const got = hook.seen[0]!;
      expect(got.headers['content-type']).toBe('application/json');
      const text = enc === 'deflate' ? inflateSync(got.body) : gunzipSync(got.body);
      if (enc !== 'deflate') expect([got.body[0], got.body[1]]).toEqual([0x1f, 0x8b]);
      bodies[enc] = { encoding: got.headers['content-encoding'], json: JSON.parse(text.toString('utf8')) };
      expect(bodies[enc].json.tasks[0].id).toBe(post.body.tasks[0].id);
    }
    expect(bodies.gzip!.encoding).toBe('gzip');
    expect(bodies['gzip-bare']!.encoding).toBeUndefined();
    expect(bodies.deflate!.encoding).toBe('deflate');
  });
});

describe('images: Versioning 6, "Images | `/v3/serp/engA/images/task_post/`, `tasks_ready/`, `task_get/advanced/`"', () => {
  const IMAGES = '/v3/serp/engA/images';

  it('serves advanced only: null endpoint_regular/endpoint_html in the ready list, a GET of regular or html refused; organic keeps all three', async () => {
    const { call, advance } = await harness();
    const img = (await call('POST', `${IMAGES}/task_post`, { body: [serpTask('red bicycle')] })).body.tasks[0].id;
    const org = (await call('POST', `${SERP}/task_post`, { body: [serpTask('red bicycle')] })).body.tasks[0].id;
    advance(300);
    const row = (await call('GET', `${IMAGES}/tasks_ready`)).body.tasks[0].result.find((t: Json) => t.id === img);
    expect(row).toMatchObject({ endpoint_regular: null, endpoint_html: null, endpoint_advanced: `${IMAGES}/task_get/advanced/${img}` });
    for (const f of ['regular', 'html']) {
      const r = await call('GET', `${IMAGES}/task_get/${f}/${img}`);
      expect([r.status, r.body.status_code]).toEqual([404, 40400]);
    }
    expect((await call('POST', `${IMAGES}/live/regular`, { body: [serpTask('red bicycle')] })).status).toBe(404);
    expect((await call('GET', `${IMAGES}/task_get/advanced/${img}`)).body.tasks[0].status_code).toBe(20000);
    const orgRow = (await call('GET', `${SERP}/tasks_ready`)).body.tasks[0].result.find((t: Json) => t.id === org);
    expect(orgRow.endpoint_regular).toBe(`${SERP}/task_get/regular/${org}`);
    expect(orgRow.endpoint_html).toBe(`${SERP}/task_get/html/${org}`);
  });

  it('refuses a postback in a format images are not served in (40501), takes advanced', async () => {
    const { call } = await harness();
    const hook = 'http://127.0.0.1:9/pb';
    const r = await call('POST', `${IMAGES}/task_post`, {
      body: ['html', 'regular', 'advanced'].map((f) => serpTask('red bicycle', { postback_url: hook, postback_data: f })),
    });
    expect(codes(r)).toEqual([40501, 40501, 20100]);
  });
});

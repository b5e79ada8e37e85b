import { describe, expect, it } from 'vitest';
import { harness, LIVE_KEY, SERP, serpTask, T0, type Json } from './sandbox-harness.js';
import { receiver } from './sandbox-receiver.js';

const DAY = 24 * 3600 * 1000;
/** The spec's request format `yyyy-mm-dd hh-mm-ss +00:00`. */
const stamp = (ms: number) => {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19).replaceAll(':', '-')} +00:00`;
};

describe('sandbox: {api}/errors rules', () => {
  it('applies limit, offset, filtered_function and the date rules, one task per query', async () => {
    const rx = await receiver(() => ({ status: 404 }));
    const { call, advance, sb, nowMs } = await harness();
    for (const k of ['a', 'b', 'c']) await call('POST', `${SERP}/task_post`, { body: [serpTask(k, { pingback_url: `${rx.url}/$id` })] });
    advance(300);
    await sb.flushCallbacks();
    advance(1000); // request dates have whole seconds
    const r = await call('POST', '/v3/serp/errors', {
      body: [
        {},
        { limit: 2 },
        { limit: 2, offset: 2 },
        { filtered_function: 'postback_url' },
        { limit: 0 },
        { limit: 1001 },
        { offset: 100_000_001 },
        { datetime_from: stamp(nowMs() - 8 * DAY) },
        { datetime_from: stamp(nowMs() - DAY), datetime_to: stamp(nowMs() - 2 * DAY) },
        { datetime_from: stamp(nowMs() - DAY), datetime_to: stamp(nowMs()) },
        { datetime_from: '2026-03-01T00:00:00Z' },
        { bogus: 1 },
      ],
    });
    const t = r.body.tasks;
    expect(t.map((x: Json) => x.status_code)).toEqual([20000, 20000, 20000, 20000, 40501, 40501, 40501, 40501, 40501, 20000, 40501, 40506]);
    expect(t[0].result).toHaveLength(3);
    expect(t[1].result).toHaveLength(2);
    expect(t[2].result).toHaveLength(1);
    expect(t[3].result).toHaveLength(0);
    expect(t[9].result).toHaveLength(3);
    expect(r.body.tasks_error).toBe(7);
    expect((await call('POST', '/v3/merchant/errors', { body: [{}] })).body.tasks[0].result).toEqual([]);
  });

  it('forgets errors after 7 days', async () => {
    const rx = await receiver(() => ({ status: 500 }));
    const { call, advance, sb } = await harness();
    await call('POST', `${SERP}/task_post`, { body: [serpTask('old', { pingback_url: `${rx.url}/$id` })] });
    advance(300);
    await sb.flushCallbacks();
    advance(7 * DAY - 1000);
    expect((await call('POST', '/v3/serp/errors', { body: [{}] })).body.tasks[0].result).toHaveLength(1);
    advance(2000);
    expect((await call('POST', '/v3/serp/errors', { body: [{}] })).body.tasks[0].result).toHaveLength(0);
  });
});

describe('sandbox: {api}/id_list', () => {
  it('lists finished and unfinished tasks with or without metadata, sorted and paged', async () => {
    const { call, advance, nowMs } = await harness();
    const ids: string[] = [];
    for (const k of ['first', 'second', 'third']) {
      ids.push((await call('POST', `${SERP}/task_post`, { key: LIVE_KEY, body: [serpTask(k, { tag: `tag-${k}` })] })).body.tasks[0].id);
      advance(1000);
    }
    // the third is posted 1 s ago and not done yet (ready after 300 ms: advance less for it)
    const unfinished = (await call('POST', `${SERP}/task_post`, { key: LIVE_KEY, body: [serpTask('fourth')] })).body.tasks[0].id;
    const from = stamp(T0 - 1000);
    const to = stamp(nowMs());
    const r = await call('POST', '/v3/serp/id_list', {
      key: LIVE_KEY,
      body: [
        { datetime_from: from, datetime_to: to },
        { datetime_from: from, datetime_to: to, sort: 'desc', limit: 2 },
        { datetime_from: from, datetime_to: to, offset: 1, limit: 1, include_metadata: true },
      ],
    });
    expect(r.headers['x-svc-charge-cny']).toBe('0.0000');
    const [all, desc, meta] = r.body.tasks.map((t: Json) => t.result);
    expect(all.map((x: Json) => x.id)).toEqual([...ids, unfinished]);
    expect(all[0]).toMatchObject({ url: `${SERP}/task_post`, status: 'finished', cost: expect.any(Number) });
    expect(all[0].datetime_done).toMatch(/\+00:00$/);
    expect(all[0].metadata).toBeUndefined();
    expect(all[3].status).toBe('in_progress');
    expect(all[3].datetime_done).toBeUndefined();
    expect(desc.map((x: Json) => x.id)).toEqual([unfinished, ids[2]]);
    expect(meta).toHaveLength(1);
    expect(meta[0].id).toBe(ids[1]);
    expect(meta[0].metadata).toMatchObject({ keyword: 'second', tag: 'tag-second' });
    // another key sees none of them
    expect((await call('POST', '/v3/serp/id_list', { body: [{ datetime_from: from, datetime_to: to }] })).body.tasks[0].result).toEqual([]);
  });

  it('looks back 6 months without metadata and 1 month with it; dates are required, ordered and not in the future', async () => {
    const { call, nowMs } = await harness();
    const now = nowMs();
    const r = await call('POST', '/v3/serp/id_list', {
      body: [
        { datetime_from: stamp(now - 60 * DAY), datetime_to: stamp(now) },
        { datetime_from: stamp(now - 60 * DAY), datetime_to: stamp(now), include_metadata: true },
        { datetime_from: stamp(now - 20 * DAY), datetime_to: stamp(now), include_metadata: true },
        { datetime_from: stamp(now - 200 * DAY), datetime_to: stamp(now) },
        { datetime_to: stamp(now) },
        { datetime_from: stamp(now - DAY), datetime_to: stamp(now + DAY) },
        { datetime_from: stamp(now - DAY), datetime_to: stamp(now - 2 * DAY) },
        { datetime_from: stamp(now - DAY), datetime_to: stamp(now), limit: 1001 },
        { datetime_from: stamp(now - DAY), datetime_to: stamp(now), sort: 'up' },
      ],
    });
    expect(r.body.tasks.map((t: Json) => t.status_code)).toEqual([20000, 40501, 20000, 40501, 40501, 40501, 40501, 40501, 40501]);
    expect(r.body.tasks[1].status_message).toMatch(/1 month/);
  });
});

describe('sandbox: tasks_fixed', () => {
  it('lists re-parsed tasks until collected after the fix, for 24 hours, with their task_get paths', async () => {
    const { call, advance } = await harness({ faults: { reparse: 1 } });
    const a = (await call('POST', `${SERP}/task_post`, { body: [serpTask('fixed one', { tag: 'fx' })] })).body.tasks[0].id;
    const b = (await call('POST', `${SERP}/task_post`, { body: [serpTask('fixed two')] })).body.tasks[0].id;
    advance(300);
    expect((await call('GET', `${SERP}/tasks_fixed`)).body.tasks[0].result).toEqual([]);
    const before = (await call('GET', `${SERP}/task_get/advanced/${b}`)).body.tasks[0].result[0];
    advance(60_000);
    const fixed = (await call('GET', `${SERP}/tasks_fixed`)).body.tasks[0].result;
    // b was collected before the fix: listed all the same, so its fixed result is collected again.
    expect(fixed.map((t: Json) => t.id).sort()).toEqual([a, b].sort());
    expect(fixed.find((t: Json) => t.id === a)).toMatchObject({
      se: 'engA',
      se_type: 'v2',
      tag: 'fx',
      endpoint_advanced: `${SERP}/task_get/advanced/${a}`,
      endpoint_html: `${SERP}/task_get/html/${a}`,
    });
    await call('GET', `${SERP}/task_get/advanced/${a}`);
    expect((await call('GET', `${SERP}/tasks_fixed`)).body.tasks[0].result.map((t: Json) => t.id)).toEqual([b]);
    const after = (await call('GET', `${SERP}/task_get/advanced/${b}`)).body.tasks[0].result[0];
    expect(after.datetime).not.toBe(before.datetime); // the re-parse rebuilt b's result
    expect((await call('GET', `${SERP}/tasks_fixed`)).body.tasks[0].result).toEqual([]); // collected since the fix
    const c = (await call('POST', `${SERP}/task_post`, { body: [serpTask('never collected')] })).body.tasks[0].id;
    advance(60_300);
    expect((await call('GET', `${SERP}/tasks_fixed`)).body.tasks[0].result.map((t: Json) => t.id)).toEqual([c]);
    advance(DAY + 1000);
    expect((await call('GET', `${SERP}/tasks_fixed`)).body.tasks[0].result).toEqual([]);
  });
});

describe('sandbox: user_data and reference endpoints', () => {
  it('nests rates, limits, statistics and money as the spec does, with real counts and balance', async () => {
    const { call } = await harness();
    await call('POST', `${SERP}/task_post`, { key: LIVE_KEY, body: [serpTask('a'), serpTask('b')] });
    await call('GET', `${SERP}/tasks_ready`, { key: LIVE_KEY });
    const r = await call('GET', '/v3/appendix/user_data', { key: LIVE_KEY });
    expect(r.headers['x-svc-charge-cny']).toBe('0.0000');
    const u = r.body.tasks[0].result[0];
    expect(u.timezone).toBe('UTC');
    const organic = u.rates.serp.task_post['engA/organic'];
    expect(organic).toMatchObject({
      priority_low: expect.any(Number),
      priority_normal: expect.any(Number),
      priority_high: expect.any(Number),
      cost_type: 'per_request',
    });
    expect(organic.priority_high).toBeGreaterThan(organic.priority_normal);
    expect(u.rates.serp.live['engA/organic'].priority_normal).toBeGreaterThan(organic.priority_normal);
    expect(u.rates.serp.task_post['engA/events'].priority_normal).toBeGreaterThan(organic.priority_normal);
    expect(u.rates.keywords_data.task_post['engA_ads/search_volume'].priority_normal).toBeGreaterThan(0);
    expect(u.limits.minute.serp.task_post).toBe(60);
    expect(u.limits.minute.total_serp).toBe(60);
    expect(u.limits.day.serp.task_post).toBeGreaterThan(60);
    expect(u.statistics.day.value).toBe('2026-03-02');
    expect(u.statistics.minute.value).toBe('2026-03-02 08:00');
    expect(u.statistics.day.serp).toEqual({ task_post: 1, tasks_ready: 1 });
    expect(u.statistics.day.total_serp).toBe(2);
    expect(u.money.total).toBe(1000);
    expect(u.money.balance).toBe(Number(r.headers['x-svc-balance-cny']));
    expect(u.money.balance).toBe(1000 - 0.0086);
    expect(u.money.statistics.day.serp.task_post).toBe(0.0086);
    expect(u.money.limits).toEqual({ day: {}, minute: {} });
    expect(u.backlinks_subscription_expiry_date).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \+00:00$/);
    expect(u.llm_mentions_subscription_expiry_date).toBeNull();
  });

  it('serves status, endpoint lists, locations, languages and lighthouse versions free of charge', async () => {
    const { call } = await harness();
    const get = (p: string) => call('GET', p, { key: LIVE_KEY });
    const status = await get('/v3/appendix/status');
    const serpStatus = status.body.tasks[0].result.find((a: Json) => a.api === 'serp');
    expect(serpStatus.status).toBe('ok');
    expect(serpStatus.endpoints).toContainEqual({ endpoint: `${SERP}/task_post`, status: 'ok' });
    const eps = (await get('/v3/serp/endpoints')).body.tasks[0].result.map((e: Json) => e.path);
    expect(eps).toContain(`${SERP}/task_post`);
    expect(eps).toContain(`${SERP}/live/advanced`);
    expect(eps).not.toContain(`${SERP}/tasks_ready`);
    const locs = (await get('/v3/serp/engA/locations')).body.tasks[0].result;
    expect(locs).toContainEqual(expect.objectContaining({ location_code: 2840, location_name: 'United States', country_iso_code: 'US' }));
    expect((await get('/v3/serp/engA/events/locations')).body.tasks[0].result.length).toBe(locs.length);
    expect((await get('/v3/serp/engA/languages')).body.tasks[0].result).toContainEqual({ language_name: 'English', language_code: 'en' });
    const ll = (await get('/v3/svc_labs/locations_and_languages')).body.tasks[0].result;
    expect(ll.find((l: Json) => l.location_code === 2276).available_languages.map((x: Json) => x.language_code)).toEqual(['de', 'en']);
    expect((await get('/v3/ai_optimization/ai_keyword_data/locations_and_languages')).status).toBe(200);
    const lh = (await get('/v3/on_page/lighthouse/versions')).body.tasks[0].result[0].available_versions;
    expect(lh.filter((v: Json) => v.default)).toHaveLength(1);
    for (const l of (await harness()).sb.log) expect(l.chargeCny).toBe('0.0000');
  });
});

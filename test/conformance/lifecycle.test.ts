/**
 * Conformance, black box: the standard-mode task lifecycle (States and transitions), the
 * ready list, task_get formats, callbacks (Events), the errors endpoint, webhook_resend and
 * id_list of service-interface.md (with the ready-list and callback details of result-shapes.md).
 * The emulator runs at time scale 5 with tasks done after 4 s of emulated time (0.8 s real: time for a POST and a look at the
 * ready list before it, on a busy machine); the callback 10 s rule is 2 s real.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  charge,
  DAY_MS,
  LIVE,
  sleep,
  SPEC_DATETIME,
  specDate,
  startEmulator,
  startReceiver,
  succeeded,
  until,
  UUID,
  type Emulator,
  type Json,
} from './emulator.js';

let e: Emulator;
let receivers: Array<{ close(): Promise<void> }> = [];
beforeAll(async () => {
  e = await startEmulator(['--time-scale', '5', '--ready-after', '4', '--no-rate-limits']);
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await e?.stop();
});

const ORGANIC = '/v3/serp/engA/organic';
const API_NAMES = [
  'serp',
  'ai_optimization',
  'keywords_data',
  'domain_analytics',
  'svc_labs',
  'backlinks',
  'on_page',
  'content_analysis',
  'merchant',
  'app_data',
  'business_data',
];
const TASK = { keyword: 'trail running shoes', location_code: 2840, language_code: 'en' };

async function receiver(answer?: Parameters<typeof startReceiver>[0]) {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

async function post(task: Json = {}): Promise<string> {
  const r = await e.call('POST', `${ORGANIC}/task_post`, { key: LIVE, body: [{ ...TASK, ...task }] });
  expect(r.body.tasks[0].status_code).toBe(20100);
  return r.body.tasks[0].id as string;
}

async function ready(): Promise<Json[]> {
  const r = await e.call('GET', `${ORGANIC}/tasks_ready`, { key: LIVE });
  expect(succeeded(r)).toBe(true);
  return r.body.tasks[0].result as Json[];
}

const inReady = async (id: string) => (await ready()).find((x) => x.id === id);

async function errorsFor(id: string, query: Json = {}): Promise<Json[]> {
  const r = await e.call('POST', '/v3/serp/errors', { key: LIVE, body: [query] });
  expect(succeeded(r)).toBe(true);
  return ((r.body.tasks[0].result ?? []) as Json[]).filter((x) => x.id === id);
}

describe('States and transitions: task lifecycle (standard mode)', () => {
  it('"POST task_post | task accepted | created (task status_code 20100) | charged at creation; result is null; data echoes parameters"', async () => {
    const r = await e.call('POST', `${ORGANIC}/task_post`, { key: LIVE, body: [{ ...TASK, tag: 'echo-me' }] });
    const t = r.body.tasks[0];
    expect(t.status_code).toBe(20100);
    expect(t.result).toBeNull();
    expect(t.data).toMatchObject({ ...TASK, tag: 'echo-me' });
    expect(charge(r)).toBeGreaterThan(0);
  });

  it('"done without callback | completion | no callback URL | listed in the ready list" (and not before completion)', async () => {
    const id = await post({ tag: 'plain' });
    expect(await inReady(id)).toBeUndefined();
    const item = await until(() => inReady(id));
    expect(item.tag).toBe('plain');
  });

  it('ready list entries (result-shapes): "`tasks[0]` is the call itself; `{id, se, se_type, date_posted, tag, endpoint_regular, endpoint_advanced, endpoint_html}`"', async () => {
    const id = await post({ tag: 'shape' });
    const item = await until(() => inReady(id));
    expect(item.id).toMatch(UUID);
    expect(typeof item.se).toBe('string');
    expect(typeof item.se_type).toBe('string');
    expect(item.date_posted).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \+00:00$/);
    for (const f of ['regular', 'advanced', 'html']) expect(item[`endpoint_${f}`]).toBe(`${ORGANIC}/task_get/${f}/${id}`);
    const r = await e.call('GET', `${ORGANIC}/tasks_ready`, { key: LIVE });
    expect(r.body.tasks).toHaveLength(1);
    expect(r.body.tasks[0].path).toEqual(['v3', 'serp', 'engA', 'organic', 'tasks_ready']);
  });

  it('ready list, keywords-data variant (result-shapes): "`{id, se, function, date_posted, tag, endpoint}`"', async () => {
    const base = '/v3/keywords_data/engA_ads/search_volume';
    const r = await e.call('POST', `${base}/task_post/`, {
      key: LIVE,
      body: [{ keywords: ['rain boots'], location_code: 2840, language_code: 'en', tag: 'kw' }],
    });
    const id = r.body.tasks[0].id as string;
    expect(r.body.tasks[0].status_code).toBe(20100);
    const item = await until(async () => {
      const list = await e.call('GET', `${base}/tasks_ready/`, { key: LIVE });
      return (list.body.tasks[0].result as Json[]).find((x) => x.id === id);
    });
    expect(typeof item.se).toBe('string');
    expect(typeof item.function).toBe('string');
    expect(item.date_posted).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \+00:00$/);
    expect(item.tag).toBe('kw');
    expect(item.endpoint).toContain(id);
    const got = await e.call('GET', item.endpoint, { key: LIVE });
    expect(succeeded(got)).toBe(true);
    expect(got.body.tasks[0].id).toBe(id);
  });

  it('"listed | collected via task_get | success | removed from the list"', async () => {
    const id = await post();
    const item = await until(() => inReady(id));
    const got = await e.call('GET', item.endpoint_advanced, { key: LIVE });
    expect(succeeded(got)).toBe(true);
    expect(got.body.tasks[0].id).toBe(id);
    expect(await inReady(id)).toBeUndefined();
  });

  it('task_get formats (Versioning rule 6): "`/v3/serp/engA/organic/task_get/regular/`, `.../advanced/`, `.../html/`" each return the task result', async () => {
    const id = await post();
    await until(() => inReady(id));
    for (const f of ['regular', 'advanced', 'html']) {
      const r = await e.call('GET', `${ORGANIC}/task_get/${f}/${id}`, { key: LIVE });
      expect(succeeded(r), f).toBe(true);
      const t = r.body.tasks[0];
      expect(t.id).toBe(id);
      expect(Array.isArray(t.result), f).toBe(true);
      expect(t.result_count).toBe(t.result.length);
      expect(t.data).toMatchObject(TASK);
      expect(t.path).toEqual(['v3', 'serp', 'engA', 'organic', 'task_get', f, id]); // "URL path segments of the call"
    }
  });
});

describe('Events: pingback and postback', () => {
  it('"pingback | task completes and `pingback_url` was set | GET to the address; `$id` and `$tag` placeholders are substituted"', async () => {
    const rec = await receiver();
    const tag = 'a b&c/é';
    const id = await post({ tag, pingback_url: `${rec.url}/ping?id=$id&tag=$tag` });
    const hit = await until(async () => rec.seen.find((s) => s.url.startsWith('/ping')));
    expect(hit.method).toBe('GET');
    const q = new URL(hit.url, rec.url).searchParams;
    expect(q.get('id')).toBe(id);
    expect(q.get('tag')).toBe(tag); // "special characters are URL-encoded": `&` and `/` survive as data
  });

  it('result-shapes: "a task posted with a callback appears [in the ready list] only if the callback failed"', async () => {
    const rec = await receiver();
    const id = await post({ pingback_url: `${rec.url}/ok?id=$id` });
    await until(async () => rec.seen.find((s) => s.url.includes(id)));
    await sleep(300);
    expect(await inReady(id)).toBeUndefined();
    expect(await errorsFor(id)).toEqual([]);
  });

  it('"postback | POST, gzip-compressed; carries the result type named by `postback_data`"', async () => {
    const rec = await receiver();
    const id = await post({ postback_url: `${rec.url}/post/$id`, postback_data: 'advanced' });
    const hit = await until(async () => rec.seen.find((s) => s.url === `/post/${id}`));
    expect(hit.method).toBe('POST');
    expect(hit.gunzipped).toBeDefined(); // gzip-compressed body
    const env = JSON.parse(hit.gunzipped!);
    expect(env.tasks[0].id).toBe(id);
    expect(Array.isArray(env.tasks[0].result)).toBe(true);
    expect(env.tasks[0].path).toContain('advanced');
  });

  it('"`postback_data` | string | required with `postback_url`; `advanced` (examples also pass `html`)": an html postback carries the html result', async () => {
    const rec = await receiver();
    const id = await post({ postback_url: `${rec.url}/html/$id`, postback_data: 'html' });
    const hit = await until(async () => rec.seen.find((s) => s.url === `/html/${id}`));
    const env = JSON.parse(hit.gunzipped!);
    expect(env.tasks[0].id).toBe(id);
    expect(env.tasks[0].path).toContain('html');
  });

  it('"callback failure | HTTP status ... above 300 | the task goes to the ready list; the failure is listed by the `errors` endpoints with `function` = `pingback_url`"', async () => {
    const rec = await receiver(() => ({ status: 500 }));
    const id = await post({ pingback_url: `${rec.url}/fail?id=$id` });
    const listed = await until(() => inReady(id));
    expect(listed.id).toBe(id);
    const [row] = await until(async () => {
      const rows = await errorsFor(id);
      return rows.length ? rows : undefined;
    });
    expect(row.function).toBe('pingback_url');
    expect(row.http_code).toBe(500);
    expect(row.http_method).toBe('GET');
    expect(row.http_url).toBe(`${rec.url}/fail?id=${id}`);
  });

  it('"callback failure | ... HTTP status below 200 or above 300": a 301 answer is a failure', async () => {
    const rec = await receiver(() => ({ status: 301 }));
    const id = await post({ pingback_url: `${rec.url}/moved?id=$id` });
    await until(() => inReady(id));
    const rows = await until(async () => {
      const r = await errorsFor(id);
      return r.length ? r : undefined;
    });
    expect(rows[0].http_code).toBe(301);
  });

  it('"callback failure | ... with `function` = ... `postback_url`"', async () => {
    const rec = await receiver(() => ({ status: 503 }));
    const id = await post({ postback_url: `${rec.url}/pb?id=$id`, postback_data: 'regular' });
    await until(() => inReady(id));
    const rows = await until(async () => {
      const r = await errorsFor(id);
      return r.length ? r : undefined;
    });
    expect(rows[0].function).toBe('postback_url');
    expect(rows[0].http_method).toBe('POST');
  });

  it('"callback failure | no answer within 10 seconds" (receiver answers after 11 s)', async () => {
    const rec = await receiver(() => ({ status: 200, delayMs: 11_000 }));
    const id = await post({ pingback_url: `${rec.url}/slow?id=$id` });
    await until(() => inReady(id), 30_000, 200);
    const rows = await until(async () => {
      const r = await errorsFor(id);
      return r.length ? r : undefined;
    }, 20_000);
    expect(rows[0].function).toBe('pingback_url');
  }, 60_000);
});

describe('Error record (errors endpoints)', () => {
  let id: string;
  let row: Json;
  beforeAll(async () => {
    const rec = await receiver(() => ({ status: 404 }));
    id = await post({ pingback_url: `${rec.url}/gone/$id` });
    [row] = await until(async () => {
      const r = await errorsFor(id);
      return r.length ? r : undefined;
    });
  });

  it('"`id` (string, task id), `datetime` (string, `yyyy-mm-dd hh-mm-ss +00:00` UTC), `function` (string), `error_code` (integer), `error_message` (string)"', () => {
    expect(row.id).toBe(id);
    expect(row.datetime).toMatch(SPEC_DATETIME);
    expect(typeof row.function).toBe('string');
    expect(Number.isInteger(row.error_code)).toBe(true);
    expect(typeof row.error_message).toBe('string');
  });

  it('"`http_url` (string; ... callback URL), `http_method` (string), `http_code` (integer), `http_time` (float), `http_response` (string)"', () => {
    expect(typeof row.http_url).toBe('string');
    expect(typeof row.http_method).toBe('string');
    expect(row.http_code).toBe(404);
    expect(typeof row.http_time).toBe('number');
    expect(typeof row.http_response).toBe('string');
  });

  it('"`filtered_function` | optional; a `function` value from the results, or `pingback_url`, `postback_url`"', async () => {
    const pb = await e.call('POST', '/v3/serp/errors', { key: LIVE, body: [{ filtered_function: 'postback_url' }] });
    expect(succeeded(pb)).toBe(true);
    for (const r of pb.body.tasks[0].result as Json[]) expect(r.function).toBe('postback_url');
    const ping = await e.call('POST', '/v3/serp/errors', { key: LIVE, body: [{ filtered_function: 'pingback_url' }] });
    const rows = ping.body.tasks[0].result as Json[];
    expect(rows.some((r) => r.id === id)).toBe(true);
    for (const r of rows) expect(r.function).toBe('pingback_url');
  });

  it('"`limit` | optional; default 1000; range 1-1000": 0 and 1001 are refused, 1 returns at most one record', async () => {
    for (const limit of [0, 1001]) {
      const r = await e.call('POST', '/v3/serp/errors', { key: LIVE, body: [{ limit }] });
      expect(succeeded(r), String(limit)).toBe(false);
    }
    const one = await e.call('POST', '/v3/serp/errors', { key: LIVE, body: [{ limit: 1 }] });
    expect(succeeded(one)).toBe(true);
    expect((one.body.tasks[0].result as Json[]).length).toBeLessThanOrEqual(1);
  });

  it('"`offset` | optional; default and minimum 0; maximum 100000000"', async () => {
    for (const offset of [-1, 100_000_001]) {
      const r = await e.call('POST', '/v3/serp/errors', { key: LIVE, body: [{ offset }] });
      expect(succeeded(r), String(offset)).toBe(false);
    }
    const r = await e.call('POST', '/v3/serp/errors', { key: LIVE, body: [{ offset: 100_000_000 }] });
    expect(succeeded(r)).toBe(true);
  });

  it('"`datetime_from` | ... not earlier than 7 days ago; not later than now"', async () => {
    const now = Date.now();
    const old = await e.call('POST', '/v3/serp/errors', { key: LIVE, body: [{ datetime_from: specDate(new Date(now - 8 * DAY_MS)) }] });
    expect(succeeded(old)).toBe(false);
    const future = await e.call('POST', '/v3/serp/errors', { key: LIVE, body: [{ datetime_from: specDate(new Date(now + DAY_MS)) }] });
    expect(succeeded(future)).toBe(false);
    const ok = await e.call('POST', '/v3/serp/errors', { key: LIVE, body: [{ datetime_from: specDate(new Date(now - 6 * DAY_MS)) }] });
    expect(succeeded(ok)).toBe(true);
  });

  it('"`datetime_to` | optional; same format; later than `datetime_from`" (an equal one is not later)', async () => {
    const now = Date.now();
    const same = specDate(new Date(now - DAY_MS));
    expect(succeeded(await e.call('POST', '/v3/serp/errors', { key: LIVE, body: [{ datetime_from: same, datetime_to: same }] }))).toBe(
      false,
    );
    const r = await e.call('POST', '/v3/serp/errors', {
      key: LIVE,
      body: [{ datetime_from: specDate(new Date(now - DAY_MS)), datetime_to: specDate(new Date(now - 2 * DAY_MS)) }],
    });
    expect(succeeded(r)).toBe(false);
  });

  it('"`{api}` (for `errors` and `id_list`) is one of: `serp`, ..., `business_data`": id_list answers for each', async () => {
    const q = { datetime_from: specDate(new Date(Date.now() - DAY_MS)), datetime_to: specDate(new Date(Date.now() - 1000)) };
    for (const api of API_NAMES) {
      const r = await e.call('POST', `/v3/${api}/id_list`, { key: LIVE, body: [q] });
      expect(succeeded(r), api).toBe(true);
    }
  });

  it('errors: "`datetime_to` | optional; same format; later than `datetime_from`" (unlike id_list, no "not after now" rule)', async () => {
    const now = Date.now();
    const r = await e.call('POST', '/v3/serp/errors', {
      key: LIVE,
      body: [{ datetime_from: specDate(new Date(now - DAY_MS)), datetime_to: specDate(new Date(now + DAY_MS)) }],
    });
    expect(succeeded(r)).toBe(true);
  });

  it('"The errors endpoint is used for `serp`, `merchant`, `business_data` and the other `{api}` values with identical shape"', async () => {
    for (const api of [
      'serp',
      'ai_optimization',
      'keywords_data',
      'domain_analytics',
      'svc_labs',
      'backlinks',
      'on_page',
      'content_analysis',
      'merchant',
      'app_data',
      'business_data',
    ]) {
      const r = await e.call('POST', `/v3/${api}/errors`, { key: LIVE, body: [{}] });
      expect(succeeded(r), api).toBe(true);
      expect(Array.isArray(r.body.tasks[0].result), api).toBe(true);
    }
  });
});

describe('Events: resend (webhook_resend)', () => {
  it('"A callback on a failed task can be recovered by listing the error via {api}/errors, then resending it." ("callbacks re-sent, no extra charge")', async () => {
    let status = 500;
    const rec = await receiver(() => ({ status }));
    const id = await post({ pingback_url: `${rec.url}/r?id=$id` });
    const [row] = await until(async () => {
      const r = await errorsFor(id);
      return r.length ? r : undefined;
    });
    status = 200;
    const before = rec.seen.length;
    const r = await e.call('POST', '/v3/appendix/webhook_resend', { key: LIVE, body: [{ id: row.id }] });
    expect(succeeded(r)).toBe(true);
    expect(charge(r) || 0).toBe(0);
    const t = r.body.tasks[0];
    expect(t.result).toBeNull(); // "`result` is null"
    await until(async () => rec.seen.length > before);
    expect(new URL(rec.seen[rec.seen.length - 1]!.url, rec.url).searchParams.get('id')).toBe(id);
  });

  it('"POST /v3/appendix/webhook_resend | array of objects with `id` ... | envelope; one task per id"', async () => {
    const rec = await receiver();
    const a = await post({ pingback_url: `${rec.url}/a?id=$id` });
    const b = await post({ pingback_url: `${rec.url}/b?id=$id` });
    await until(async () => rec.seen.length >= 2);
    const r = await e.call('POST', '/v3/appendix/webhook_resend', { key: LIVE, body: [{ id: a }, { id: b }] });
    expect(r.body.tasks_count).toBe(2);
    expect(r.body.tasks.map((t: Json) => t.data.id)).toEqual([a, b]);
  });

  it('"a task whose function has no callback support gets task status 40503" (a live task: "callbacks for standard-mode tasks")', async () => {
    const live = await e.call('POST', `${ORGANIC}/live/regular`, { key: LIVE, body: [TASK] });
    const id = live.body.tasks[0].id as string;
    const r = await e.call('POST', '/v3/appendix/webhook_resend', { key: LIVE, body: [{ id }] });
    expect(r.body.tasks[0].status_code).toBe(40503);
    expect(r.body.tasks_error).toBe(1);
  });

  it('"array of objects with `id` (UUID string, required)": a missing or non-UUID id is a task error', async () => {
    for (const body of [[{}], [{ id: 'not-a-uuid' }]]) {
      const r = await e.call('POST', '/v3/appendix/webhook_resend', { key: LIVE, body });
      expect(succeeded(r), JSON.stringify(body)).toBe(false);
    }
  });

  it('"`webhook_resend` | 100 task ids per call": 100 ids are answered, one task each', async () => {
    const id = await post();
    const r = await e.call('POST', '/v3/appendix/webhook_resend', { key: LIVE, body: Array.from({ length: 100 }, () => ({ id })) });
    expect(r.body.status_code).toBe(20000);
    expect(r.body.tasks_count).toBe(100);
  });

  it('"`webhook_resend` | 100 task ids per call": 101 ids are not accepted', async () => {
    const id = await post();
    const r = await e.call('POST', '/v3/appendix/webhook_resend', { key: LIVE, body: Array.from({ length: 101 }, () => ({ id })) });
    expect(succeeded(r)).toBe(false);
  });
});

describe('Task-id-list record (id_list)', () => {
  const list = (q: Json) => e.call('POST', '/v3/serp/id_list', { key: LIVE, body: [q] });
  const window = (fromMs: number, extra: Json = {}) => ({
    datetime_from: specDate(new Date(Date.now() - fromMs)),
    datetime_to: specDate(new Date(Date.now())),
    ...extra,
  });

  it('"In the `id_list` results both finished and unfinished tasks appear"; record fields `id`, `url`, `datetime_posted`, `status`, `cost`', async () => {
    const done = await post({ tag: 'idl-done' });
    await until(() => inReady(done));
    const pending = await post({ tag: 'idl-pending' });
    await sleep(1050); // the window's end is whole seconds and "not after now"
    const r = await list(window(3600_000));
    expect(succeeded(r)).toBe(true);
    const rows = r.body.tasks[0].result as Json[];
    const ids = rows.map((x) => x.id);
    expect(ids).toContain(done);
    expect(ids).toContain(pending);
    for (const x of rows) {
      expect(typeof x.id).toBe('string');
      expect(x.url).toContain('/v3/serp/'); // "API path used to create the task"
      expect(typeof x.datetime_posted).toBe('string');
      expect(typeof x.status).toBe('string');
      expect(typeof x.cost).toBe('number');
      expect('metadata' in x).toBe(false); // "only when `include_metadata` is true"
    }
    for (const mine of [done, pending]) expect(rows.find((x) => x.id === mine)!.url).toContain('/v3/serp/engA/organic/task_post');
    const d = rows.find((x) => x.id === done)!;
    expect(typeof d.datetime_done).toBe('string');
    expect(d.datetime_done.length).toBeGreaterThan(0);
  });

  it('"`metadata` (object; only when `include_metadata` is true; the parameters submitted at creation)"', async () => {
    const id = await post({ tag: 'idl-meta' });
    await sleep(1050);
    const r = await list(window(3600_000, { include_metadata: true }));
    const row = (r.body.tasks[0].result as Json[]).find((x) => x.id === id)!;
    expect(row.metadata).toMatchObject({ ...TASK, tag: 'idl-meta' });
  });

  it('"`datetime_from` | ... earliest 1 month back when `include_metadata` is true, 6 months back when false"', async () => {
    expect(succeeded(await list(window(60 * DAY_MS, { include_metadata: true })))).toBe(false);
    expect(succeeded(await list(window(60 * DAY_MS)))).toBe(true);
    expect(succeeded(await list(window(21 * DAY_MS, { include_metadata: true })))).toBe(true);
    expect(succeeded(await list(window(150 * DAY_MS)))).toBe(true);
    expect(succeeded(await list(window(200 * DAY_MS)))).toBe(false);
  });

  it('"`datetime_from` ... not after now"; "`datetime_to` | not after now; later than `datetime_from`"', async () => {
    const now = Date.now();
    const q = (from: number, to: number) => ({ datetime_from: specDate(new Date(from)), datetime_to: specDate(new Date(to)) });
    expect(succeeded(await list(q(now + DAY_MS, now + 2 * DAY_MS)))).toBe(false);
    expect(succeeded(await list(q(now - DAY_MS, now + DAY_MS)))).toBe(false);
    expect(succeeded(await list(q(now - DAY_MS, now - 2 * DAY_MS)))).toBe(false);
    expect(succeeded(await list(q(now - DAY_MS, now - DAY_MS)))).toBe(false); // equal is not later
  });

  it('"`limit` | default 1000; range 1-1000"; "`offset` | default and minimum 0; maximum 100000000"', async () => {
    for (const extra of [{ limit: 0 }, { limit: 1001 }, { offset: -1 }, { offset: 100_000_001 }]) {
      expect(succeeded(await list(window(3600_000, extra))), JSON.stringify(extra)).toBe(false);
    }
    const one = await list(window(3600_000, { limit: 1 }));
    expect(succeeded(one)).toBe(true);
    expect(one.body.tasks[0].result).toHaveLength(1);
  });

  it('"`sort` | `asc` or `desc`; default `asc`; sorts by task execution time"', async () => {
    // three tasks posted (and so done) well apart: any reading of "execution time" orders them alike
    const mine: string[] = [];
    for (let i = 0; i < 3; i++) {
      mine.push(await post({ tag: `sort-${i}` }));
      await sleep(60);
    }
    await until(() => inReady(mine[2]!));
    await sleep(1050);
    const order = async (extra: Json) =>
      ((await list(window(3600_000, extra))).body.tasks[0].result as Json[]).map((x) => x.id as string).filter((id) => mine.includes(id));
    expect(await order({})).toEqual(mine);
    expect(await order({ sort: 'asc' })).toEqual(mine);
    expect(await order({ sort: 'desc' })).toEqual([...mine].reverse());
  });
});

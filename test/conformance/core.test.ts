/**
 * Conformance, black box: Authentication, the common response envelope, the success rule,
 * Errors rules 1-3, Billing, Versioning and the utility endpoints of service-interface.md.
 * Each `it` quotes the spec sentence it checks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { balance, charge, LIVE, SANDBOX, SPEC_DATETIME, startEmulator, succeeded, UUID, type Emulator, type Json } from './emulator.js';

let e: Emulator;
beforeAll(async () => {
  e = await startEmulator(['--time-scale', '60', '--no-rate-limits']);
});
afterAll(() => e?.stop());

const ORGANIC_TASK = { keyword: 'trail running shoes', location_code: 2840, language_code: 'en' };
const EVENTS_TASK = { keyword: 'jazz concerts', location_code: 2840 };
const isInt = (v: unknown) => typeof v === 'number' && Number.isInteger(v);

describe('Authentication', () => {
  it('rule 1: "Every request carries the header `Authorization: Bearer <API_KEY>`." (no header: refused)', async () => {
    const r = await e.call('GET', '/v3/appendix/user_data', { key: null });
    expect(succeeded(r)).toBe(false);
    expect(r.headers.get('x-svc-charge-cny') ?? '0').toMatch(/^0(\.0+)?$/);
  });

  it('rule 1: "Basic authentication is forbidden." (a valid key sent as Basic is refused)', async () => {
    for (const cred of [`${LIVE}:`, `${LIVE}:${LIVE}`]) {
      const r = await e.call('GET', '/v3/appendix/user_data', {
        key: null,
        headers: { Authorization: `Basic ${Buffer.from(cred).toString('base64')}` },
      });
      expect(succeeded(r)).toBe(false);
    }
  });

  it('rule 2: "`svc_sandbox_<key>` (no charge)" and Billing: "Sandbox keys are never charged."', async () => {
    const before = await e.call('GET', '/v3/appendix/user_data', { key: LIVE });
    const r = await e.call('POST', '/v3/serp/engA/events/task_post', { key: SANDBOX, body: [EVENTS_TASK] });
    expect(r.body.tasks[0].status_code).toBe(20100);
    expect(charge(r) || 0).toBe(0);
    const after = await e.call('GET', '/v3/appendix/user_data', { key: LIVE });
    expect(after.body.tasks[0].result[0].money.balance).toBe(before.body.tasks[0].result[0].money.balance);
  });

  it('rule 2: "Image generation is not available with sandbox keys (HTTP 403)."', async () => {
    const r = await e.call('POST', '/v1/chat/completions', {
      key: SANDBOX,
      body: { model: 'imgmodel-3.1-flash-image', messages: [{ role: 'user', content: 'a red bicycle' }], stream: false, n: 1 },
    });
    expect(r.status).toBe(403);
  });

  it('rule 3: "An invalid key returns HTTP 401." (/v3, GET and POST, both prefixes and a foreign key)', async () => {
    for (const key of ['svc_live_testnot_a_key_of_this_account', 'svc_sandbox_not_a_key_either', 'sk-someone-else']) {
      expect((await e.call('GET', '/v3/appendix/user_data', { key })).status).toBe(401);
      expect((await e.call('POST', '/v3/serp/engA/events/task_post', { key, body: [EVENTS_TASK] })).status).toBe(401);
    }
  });

  it('Errors table: "embeddings | invalid key | 401"; rule 3 on /v1 chat too', async () => {
    const key = 'svc_live_testnot_a_key_of_this_account';
    expect((await e.call('POST', '/v1/embeddings', { key, body: { model: 'text-embedding-3-small', input: 'x' } })).status).toBe(401);
    const chat = await e.call('POST', '/v1/chat/completions', {
      key,
      body: { model: 'chat5.6-luna', messages: [{ role: 'user', content: 'x' }] },
    });
    expect(chat.status).toBe(401);
  });
});

describe('Common response envelope (all /v3 endpoints except .ai responses)', () => {
  let post: Json;
  beforeAll(async () => {
    post = await e.call('POST', '/v3/serp/engA/organic/task_post', {
      key: LIVE,
      body: [
        { ...ORGANIC_TASK, tag: 'first' },
        { ...ORGANIC_TASK, keyword: 'hiking boots', tag: 'second' },
      ],
    });
  });

  it('top level: "`version` string, `status_code` integer (20000 is success), `status_message` string, `cost` number, `tasks` array"', () => {
    const b = post.body;
    expect(typeof b.version).toBe('string');
    expect(b.status_code).toBe(20000);
    expect(typeof b.status_message).toBe('string');
    expect(typeof b.cost).toBe('number');
    expect(Array.isArray(b.tasks)).toBe(true);
  });

  it('"`time` | string | Total execution time in seconds, written as `<seconds> sec.`" (top level and tasks)', () => {
    expect(post.body.time).toMatch(/^\d+(\.\d+)? sec\.$/);
    for (const t of post.body.tasks) expect(t.time).toMatch(/^\d+(\.\d+)? sec\.$/);
  });

  it('"`tasks_count` | integer | Number of items in `tasks`"', () => {
    expect(post.body.tasks_count).toBe(post.body.tasks.length);
    expect(post.body.tasks_count).toBe(2);
  });

  it('task object: "`id` | string | Task identifier, UUID format"; `status_message` string; `cost` number', () => {
    for (const t of post.body.tasks) {
      expect(t.id).toMatch(UUID);
      expect(typeof t.status_message).toBe('string');
      expect(typeof t.cost).toBe('number');
    }
    expect(post.body.tasks[0].id).not.toBe(post.body.tasks[1].id);
  });

  it('"`path` | array of strings | URL path segments of the call"', () => {
    for (const t of post.body.tasks) expect(t.path).toEqual(['v3', 'serp', 'engA', 'organic', 'task_post']);
  });

  it('"`data` | Echo of the submitted parameters (with `api` and `function` names added)"', () => {
    const [a, b] = post.body.tasks;
    expect(a.data).toMatchObject({ ...ORGANIC_TASK, tag: 'first' });
    expect(b.data).toMatchObject({ keyword: 'hiking boots', tag: 'second' });
    for (const t of post.body.tasks) {
      expect(typeof t.data.api).toBe('string');
      expect(typeof t.data.function).toBe('string');
    }
  });

  it('"`result` | array or null | null for task creation"; "`result_count` | integer | Number of elements in `result`"', async () => {
    for (const t of post.body.tasks) {
      expect(t.result).toBeNull();
      expect(t.result_count).toBe(0);
    }
    const status = await e.call('GET', '/v3/appendix/status');
    const t = status.body.tasks[0];
    expect(t.result_count).toBe(t.result.length);
  });

  it('"`status_code` | integer | Task status, within 10000-60000" (successes and failures)', async () => {
    const r = await e.call('POST', '/v3/serp/engA/events/task_post', {
      body: [EVENTS_TASK, { location_code: 2840 }, { ...EVENTS_TASK, depth: 100_000 }],
    });
    for (const t of r.body.tasks) {
      expect(isInt(t.status_code)).toBe(true);
      expect(t.status_code).toBeGreaterThanOrEqual(10000);
      expect(t.status_code).toBeLessThanOrEqual(60000);
    }
  });

  it('the envelope is used by GET utility endpoints too ("all /v3 endpoints")', async () => {
    for (const path of ['/v3/appendix/user_data', '/v3/appendix/status', '/v3/serp/endpoints', '/v3/on_page/lighthouse/versions']) {
      const b = (await e.call('GET', path)).body;
      expect(Object.keys(b).sort()).toEqual(
        ['cost', 'status_code', 'status_message', 'tasks', 'tasks_count', 'tasks_error', 'time', 'version'].sort(),
      );
    }
  });
});

describe('Success rule and Errors rules', () => {
  it('Errors rule 2: "`tasks_error` above 0 means at least one task failed; ... one batch can hold successes and failures"', async () => {
    const r = await e.call('POST', '/v3/serp/engA/events/task_post', {
      body: [EVENTS_TASK, { ...EVENTS_TASK, keyword: 'k'.repeat(701) }, EVENTS_TASK],
    });
    expect(r.body.tasks_error).toBe(1);
    expect(r.body.tasks.map((t: Json) => t.status_code === 20100)).toEqual([true, false, true]);
    expect(succeeded(r)).toBe(false);
  });

  it('"`tasks_error` | integer | Number of tasks that returned an error" is 0 on an all-success call', async () => {
    const r = await e.call('POST', '/v3/serp/engA/events/task_post', { body: [EVENTS_TASK, EVENTS_TASK] });
    expect(r.body.tasks_error).toBe(0);
    expect(succeeded(r)).toBe(true);
  });

  it('Success rule: "(20000, or 20100 for task creation)": a created task has 20100 and the call 20000', async () => {
    const r = await e.call('POST', '/v3/serp/engA/organic/task_post', { body: [ORGANIC_TASK] });
    expect(r.status).toBe(200);
    expect(r.body.status_code).toBe(20000);
    expect(r.body.tasks[0].status_code).toBe(20100);
  });
});

describe('Billing', () => {
  it('"Response headers on charged calls": `X-Svc-Charge-CNY`, `X-Svc-Cost-USD`, `X-Svc-Request-ID`', async () => {
    const r = await e.call('POST', '/v3/serp/engA/events/task_post', { key: LIVE, body: [EVENTS_TASK] });
    expect(charge(r)).toBeGreaterThan(0);
    expect(Number(r.headers.get('x-svc-cost-usd'))).toBeGreaterThan(0);
    expect(r.headers.get('x-svc-request-id')).toBeTruthy();
    const again = await e.call('POST', '/v3/serp/engA/events/task_post', { key: LIVE, body: [EVENTS_TASK] });
    expect(again.headers.get('x-svc-request-id')).not.toBe(r.headers.get('x-svc-request-id')); // "Request trace identifier"
  });

  it('"The body field `cost` is the raw cost in USD ... and is not the charge": `cost` equals `X-Svc-Cost-USD`', async () => {
    const r = await e.call('POST', '/v3/serp/engA/organic/task_post', { key: LIVE, body: [ORGANIC_TASK, ORGANIC_TASK] });
    expect(r.body.cost).toBeCloseTo(Number(r.headers.get('x-svc-cost-usd')), 6);
  });

  it('"`X-Svc-Balance-CNY` | Balance after the charge": balance falls by exactly the charge', async () => {
    const a = await e.call('POST', '/v3/serp/engA/events/task_post', { key: LIVE, body: [EVENTS_TASK] });
    const b = await e.call('POST', '/v3/serp/engA/events/task_post', { key: LIVE, body: [EVENTS_TASK, EVENTS_TASK] });
    if (Number.isNaN(balance(a)) || Number.isNaN(balance(b))) return; // "only on endpoints that support it"
    expect(balance(b)).toBeCloseTo(balance(a) - charge(b), 4);
  });

  it('`money.balance` of user_data ("balance (float), CNY") equals the balance after the last charge', async () => {
    const a = await e.call('POST', '/v3/serp/engA/events/task_post', { key: LIVE, body: [EVENTS_TASK] });
    const u = await e.call('GET', '/v3/appendix/user_data', { key: LIVE });
    if (!Number.isNaN(balance(a))) expect(u.body.tasks[0].result[0].money.balance).toBeCloseTo(balance(a), 4);
  });

  it('"Calls that are free (their charge is 0) include: lighthouse versions, endpoint lists, API status, {path}/errors, {path}/id_list, user_data, webhook_resend, tasks_fixed"', async () => {
    const now = new Date();
    const fmt = (d: Date) => d.toISOString().replace('T', ' ').replace(/:/g, '-').slice(0, 19) + ' +00:00';
    const post = await e.call('POST', '/v3/serp/engA/organic/task_post', { key: LIVE, body: [ORGANIC_TASK] });
    const id = post.body.tasks[0].id as string;
    const calls: Array<[string, string, unknown?]> = [
      ['GET', '/v3/on_page/lighthouse/versions'],
      ['GET', '/v3/serp/endpoints'],
      ['GET', '/v3/keywords_data/endpoints'],
      ['GET', '/v3/appendix/status'],
      ['POST', '/v3/serp/errors', [{}]],
      ['POST', '/v3/serp/id_list', [{ datetime_from: fmt(new Date(now.getTime() - 3600_000)), datetime_to: fmt(now) }]],
      ['GET', '/v3/appendix/user_data'],
      ['POST', '/v3/appendix/webhook_resend', [{ id }]],
      ['GET', '/v3/serp/engA/organic/tasks_fixed'],
    ];
    for (const [method, path, body] of calls) {
      const r = await e.call(method, path, { key: LIVE, body });
      expect(r.status, path).toBe(200);
      expect(charge(r) || 0, path).toBe(0);
    }
  });

  it('"Events `task_post` is charged when the task is created (reference about 0.0240 CNY per task)"', async () => {
    const one = await e.call('POST', '/v3/serp/engA/events/task_post', { key: LIVE, body: [EVENTS_TASK] });
    const three = await e.call('POST', '/v3/serp/engA/events/task_post', { key: LIVE, body: [EVENTS_TASK, EVENTS_TASK, EVENTS_TASK] });
    expect(one.body.tasks[0].status_code).toBe(20100);
    expect(charge(one)).toBeGreaterThan(0);
    expect(charge(three)).toBeCloseTo(3 * charge(one), 4);
  });

  it('"Priority 2 costs extra." (events task_post)', async () => {
    const p1 = await e.call('POST', '/v3/serp/engA/events/task_post', { key: LIVE, body: [{ ...EVENTS_TASK, priority: 1 }] });
    const p2 = await e.call('POST', '/v3/serp/engA/events/task_post', { key: LIVE, body: [{ ...EVENTS_TASK, priority: 2 }] });
    expect(p2.body.tasks[0].status_code).toBe(20100);
    expect(charge(p2)).toBeGreaterThan(charge(p1));
  });

  it('"Live: one POST returns the result directly."', async () => {
    const live = await e.call('POST', '/v3/serp/engA/organic/live/regular', { body: [ORGANIC_TASK] });
    expect(succeeded(live)).toBe(true);
    expect(live.body.tasks[0].status_code).toBe(20000);
    expect(live.body.tasks[0].result.length).toBeGreaterThan(0);
  });

  it('"Live mode costs more than standard mode."', async () => {
    const std = await e.call('POST', '/v3/serp/engA/organic/task_post', { key: LIVE, body: [ORGANIC_TASK] });
    const live = await e.call('POST', '/v3/serp/engA/organic/live/advanced', { key: LIVE, body: [ORGANIC_TASK] });
    expect(succeeded(live)).toBe(true);
    expect(charge(live)).toBeGreaterThan(charge(std));
  });

  it('"In standard mode, normal priority is cheaper than high priority."', async () => {
    const normal = await e.call('POST', '/v3/serp/engA/organic/task_post', { key: LIVE, body: [{ ...ORGANIC_TASK, priority: 1 }] });
    const high = await e.call('POST', '/v3/serp/engA/organic/task_post', { key: LIVE, body: [{ ...ORGANIC_TASK, priority: 2 }] });
    expect(charge(normal)).toBeLessThan(charge(high));
  });

  it('"A `depth` above 10 can add charges per additional block of 10 results." (never less than depth 10)', async () => {
    const d10 = await e.call('POST', '/v3/serp/engA/organic/task_post', { key: LIVE, body: [{ ...ORGANIC_TASK, depth: 10 }] });
    const d100 = await e.call('POST', '/v3/serp/engA/organic/task_post', { key: LIVE, body: [{ ...ORGANIC_TASK, depth: 100 }] });
    expect(charge(d100)).toBeGreaterThanOrEqual(charge(d10));
  });

  it('"If fewer results are returned than `depth`, the difference is refunded to the balance."', async () => {
    const task = { ...ORGANIC_TASK, keyword: 'best waterproof trail running shoes for wide feet', depth: 700 };
    const post = await e.call('POST', '/v3/serp/engA/organic/task_post', { key: LIVE, body: [task] });
    const id = post.body.tasks[0].id as string;
    const afterPost = balance(post);
    await new Promise((r) => setTimeout(r, 300));
    const got = await e.call('GET', `/v3/serp/engA/organic/task_get/advanced/${id}`, { key: LIVE });
    expect(succeeded(got)).toBe(true);
    const returned = (got.body.tasks[0].result[0].items as Json[]).filter((i) => i.type === 'organic').length;
    expect(returned).toBeLessThan(700);
    const now = (await e.call('GET', '/v3/appendix/user_data', { key: LIVE })).body.tasks[0].result[0].money.balance as number;
    expect(now).toBeGreaterThan(afterPost);
    expect(now).toBeLessThanOrEqual(afterPost + charge(post) + 1e-9);
  });

  it('"`on_page/resources` is listed as free (reference price 0.0000)"', async () => {
    const crawl = await e.call('POST', '/v3/on_page/task_post', { key: LIVE, body: [{ target: 'shop.example', max_crawl_pages: 5 }] });
    const id = crawl.body.tasks[0].id as string;
    const r = await e.call('POST', '/v3/on_page/resources', { key: LIVE, body: [{ id }] });
    expect(r.status).toBe(200);
    expect(charge(r) || 0).toBe(0);
  });
});

describe('Versioning', () => {
  it('rule 1: "The body field `version` carries the API version string of the endpoint."', async () => {
    const r = await e.call('GET', '/v3/appendix/status');
    expect(typeof r.body.version).toBe('string');
    expect(r.body.version.length).toBeGreaterThan(0);
  });

  it('rule 2: "Old v2 paths are removed." (a v2 path is not served)', async () => {
    const r = await e.call('POST', '/v2/serp/engA/organic/task_post', { body: [ORGANIC_TASK] });
    expect(succeeded(r)).toBe(false);
  });

  it('rule 8: "all three SERP formats readable by GET after one paid POST" (regular, advanced, html; each GET charged 0)', async () => {
    const post = await e.call('POST', '/v3/serp/engA/organic/task_post', { key: LIVE, body: [ORGANIC_TASK] });
    const id = post.body.tasks[0].id as string;
    await new Promise((r) => setTimeout(r, 300));
    for (const format of ['regular', 'advanced', 'html']) {
      const r = await e.call('GET', `/v3/serp/engA/organic/task_get/${format}/${id}`, { key: LIVE });
      expect(succeeded(r), format).toBe(true);
      expect(r.body.tasks[0].id).toBe(id);
      expect(charge(r) || 0, format).toBe(0);
    }
  });
});

describe('Utility endpoints and their results', () => {
  it('Lighthouse versions: "`result[0].available_versions[]`: `version` (string), `default` (boolean ...)" with one default', async () => {
    const r = await e.call('GET', '/v3/on_page/lighthouse/versions');
    const versions = r.body.tasks[0].result[0].available_versions as Json[];
    expect(versions.length).toBeGreaterThan(0);
    for (const v of versions) {
      expect(typeof v.version).toBe('string');
      expect(typeof v.default).toBe('boolean');
    }
    expect(versions.filter((v) => v.default)).toHaveLength(1);
  });

  it('Endpoint lists: "`result[]` objects with `path` (string, an endpoint path usable to create tasks)"', async () => {
    for (const api of ['serp', 'keywords_data']) {
      const r = await e.call('GET', `/v3/${api}/endpoints`);
      const paths = (r.body.tasks[0].result as Json[]).map((x) => x.path);
      expect(paths.length).toBeGreaterThan(0);
      for (const p of paths) expect(p).toMatch(new RegExp(`^/v3/${api}/`));
    }
    const serp = (await e.call('GET', '/v3/serp/endpoints')).body.tasks[0].result as Json[];
    const taskPost = serp.map((x) => x.path as string).find((p) => p.includes('/engA/organic/task_post'));
    expect(taskPost).toBeDefined();
    const created = await e.call('POST', taskPost!, { body: [ORGANIC_TASK] });
    expect(created.body.tasks[0].status_code).toBe(20100);
  });

  it('API status: "`result[]`: `api`, `status`, `endpoints[]` with `endpoint` and `status`", values from the status_page list', async () => {
    const values = ['major_outage', 'partial_outage', 'long_response_time', 'long_execution_time', 'webhook_delay', 'send_delay', 'ok'];
    const r = await e.call('GET', '/v3/appendix/status');
    const result = r.body.tasks[0].result as Json[];
    expect(result.length).toBeGreaterThan(0);
    for (const a of result) {
      expect(typeof a.api).toBe('string');
      expect(values).toContain(a.status);
      for (const ep of a.endpoints) {
        expect(typeof ep.endpoint).toBe('string');
        expect(values).toContain(ep.status);
      }
    }
  });

  it('Account data: `login`, `timezone` strings; `rates`, `limits`, `statistics`, `money` objects; `money.total`, `money.balance` floats', async () => {
    const u = (await e.call('GET', '/v3/appendix/user_data', { key: LIVE })).body.tasks[0].result[0];
    expect(typeof u.login).toBe('string');
    expect(typeof u.timezone).toBe('string');
    for (const k of ['rates', 'limits', 'statistics', 'money']) expect(typeof u[k], k).toBe('object');
    expect(typeof u.money.total).toBe('number');
    expect(typeof u.money.balance).toBe('number');
  });

  it('Account data: "priorities `priority_low`, `priority_normal`, `priority_high` (floats); a leaf may also hold `cost_type` (`per_result` or `per_request`)"', async () => {
    const u = (await e.call('GET', '/v3/appendix/user_data', { key: LIVE })).body.tasks[0].result[0];
    const leaves: Json[] = [];
    const walk = (o: Json) => {
      if (o && typeof o === 'object') {
        if ('priority_normal' in o || 'priority_low' in o || 'priority_high' in o) leaves.push(o);
        else for (const v of Object.values(o)) walk(v);
      }
    };
    walk(u.rates);
    expect(leaves.length).toBeGreaterThan(0);
    for (const leaf of leaves) {
      for (const p of ['priority_low', 'priority_normal', 'priority_high']) if (p in leaf) expect(typeof leaf[p]).toBe('number');
      if ('cost_type' in leaf) expect(['per_result', 'per_request']).toContain(leaf.cost_type);
      if ('cost' in leaf) expect(typeof leaf.cost).toBe('number');
    }
  });

  it('Account data: "`limits` ... `<grouping>` (`day` or `minute`) ... integer values"', async () => {
    const u = (await e.call('GET', '/v3/appendix/user_data', { key: LIVE })).body.tasks[0].result[0];
    for (const g of Object.keys(u.limits)) expect(['day', 'minute']).toContain(g);
    const nums: unknown[] = [];
    const walk = (o: Json) => {
      if (o && typeof o === 'object') for (const v of Object.values(o)) walk(v);
      else nums.push(o);
    };
    walk(u.limits);
    for (const n of nums) expect(isInt(n)).toBe(true);
  });

  it('Account data: "`statistics` ... plus `value` (string period: `yyyy-MM-dd` for day, `yyyy-MM-dd HH:mm` for minute)"', async () => {
    const u = (await e.call('GET', '/v3/appendix/user_data', { key: LIVE })).body.tasks[0].result[0];
    if (u.statistics.day?.value !== undefined) expect(u.statistics.day.value).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    if (u.statistics.minute?.value !== undefined) expect(u.statistics.minute.value).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
  });

  it('Account data: "`backlinks_subscription_expiry_date` | string or null | `yyyy-MM-dd HH:mm:ss +00:00`" (and the llm_mentions one)', async () => {
    const u = (await e.call('GET', '/v3/appendix/user_data', { key: LIVE })).body.tasks[0].result[0];
    for (const k of ['backlinks_subscription_expiry_date', 'llm_mentions_subscription_expiry_date']) {
      expect(k in u, k).toBe(true);
      if (u[k] !== null) expect(u[k]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \+00:00$/);
    }
  });

  it('"GET /v3/serp/engA/locations | locations list (`location_code`, `location_name` per element)"', async () => {
    const r = await e.call('GET', '/v3/serp/engA/locations');
    expect(succeeded(r)).toBe(true);
    const result = r.body.tasks[0].result as Json[];
    expect(result.length).toBeGreaterThan(0);
    for (const l of result) {
      expect(isInt(l.location_code)).toBe(true);
      expect(typeof l.location_name).toBe('string');
    }
  });

  it('"GET /v3/serp/engA/languages" and "GET /v3/serp/engA/events/locations" are served', async () => {
    for (const p of ['/v3/serp/engA/languages', '/v3/serp/engA/events/locations']) {
      const r = await e.call('GET', p);
      expect(succeeded(r), p).toBe(true);
      expect((r.body.tasks[0].result as Json[]).length, p).toBeGreaterThan(0);
    }
  });

  it('AI optimization: "GET .../ai_keyword_data/available_filters" and "GET .../ai_keyword_data/locations_and_languages" return envelopes', async () => {
    for (const p of [
      '/v3/ai_optimization/ai_keyword_data/available_filters',
      '/v3/ai_optimization/ai_keyword_data/locations_and_languages',
    ]) {
      const r = await e.call('GET', p);
      expect(succeeded(r), p).toBe(true);
    }
  });

  it('Sandbox: "id `00000000-0000-0000-0000-000000000000` returns a full result-element sample"', async () => {
    const id = '00000000-0000-0000-0000-000000000000';
    const r = await e.call('GET', `/v3/serp/engA/organic/task_get/advanced/${id}`);
    expect(succeeded(r)).toBe(true);
    const result = r.body.tasks[0].result as Json[];
    expect(result.length).toBeGreaterThan(0);
    expect(result[0].items.length).toBeGreaterThan(0);
  });

  it('Error record datetime form "`yyyy-mm-dd hh-mm-ss +00:00`" is the form `errors` accepts (a spec-form window is accepted)', async () => {
    const now = new Date();
    const from = new Date(now.getTime() - 86_400_000).toISOString().replace('T', ' ').replace(/:/g, '-').slice(0, 19) + ' +00:00';
    expect(from).toMatch(SPEC_DATETIME);
    const r = await e.call('POST', '/v3/serp/errors', { body: [{ datetime_from: from }] });
    expect(succeeded(r)).toBe(true);
  });
});

/** Served at all: an envelope, and neither HTTP 404 nor "not found"/"invalid path" (40400, 40402 of result-shapes). */
function routed(r: Json): boolean {
  const codes = [r.body?.status_code, ...((r.body?.tasks ?? []) as Json[]).map((t) => t.status_code)];
  return r.status !== 404 && typeof r.body === 'object' && 'tasks' in r.body && !codes.includes(40400) && !codes.includes(40402);
}
const ANY_TASK = { keyword: 'trail shoes', keywords: ['trail shoes'], target: 'shop.example', location_code: 2840, language_code: 'en' };

describe('Sandbox', () => {
  it('"The sandbox ... mirrors the production path layout": every shown path is served', async () => {
    const posts = [
      '/v3/serp/engA/organic/task_post',
      '/v3/serp/engA/organic/live/regular',
      '/v3/keywords_data/engA/search_volume/task_post',
      '/v3/keywords_data/engA/search_volume/live',
      '/v3/domain_analytics/technologies/aggregation_technologies/live',
      '/v3/svc_labs/engA/related_keywords/live',
      '/v3/svc_labs/engA/ranked_keywords/live',
      '/v3/svc_labs/engA/competitors_domain/live',
      '/v3/backlinks/referring_domains/live',
      '/v3/on_page/task_post',
      '/v3/content_analysis/search/live',
      '/v3/merchant/engA/products/task_post',
      '/v3/app_data/engA/app_searches/task_post',
      '/v3/business_data/engA/hotel_info/task_post',
    ];
    const created: Record<string, string> = {};
    for (const p of posts) {
      const r = await e.call('POST', p, { body: [ANY_TASK] });
      expect(routed(r), p).toBe(true);
      if (p.endsWith('/task_post')) created[p] = r.body.tasks[0].id;
    }
    const crawl = created['/v3/on_page/task_post']!;
    for (const p of ['/v3/on_page/pages', '/v3/on_page/links']) {
      expect(routed(await e.call('POST', p, { body: [{ id: crawl }] })), p).toBe(true);
    }
    await new Promise((r) => setTimeout(r, 300));
    const gets: Array<[string, string]> = [
      ['/v3/serp/engA/organic/task_post', '/v3/serp/engA/organic/task_get/advanced/'],
      ['/v3/keywords_data/engA/search_volume/task_post', '/v3/keywords_data/engA/search_volume/task_get/'],
      ['/v3/merchant/engA/products/task_post', '/v3/merchant/engA/products/task_get/advanced/'],
      ['/v3/app_data/engA/app_searches/task_post', '/v3/app_data/engA/app_searches/task_get/advanced/'],
      ['/v3/business_data/engA/hotel_info/task_post', '/v3/business_data/engA/hotel_info/task_get/advanced/'],
    ];
    for (const [post, get] of gets) {
      const r = await e.call('GET', `${get}${created[post]}`);
      expect(routed(r), get).toBe(true);
      expect(succeeded(r), get).toBe(true);
    }
  });
});

describe('Versioning rule 6: path mapping from v2 functions to v3', () => {
  it('every live and task-creation path of the mapping table is served (POST)', async () => {
    const paths = [
      '/v3/serp/engA/organic/live/regular/',
      '/v3/serp/engA/organic/live/advanced/',
      '/v3/serp/engA/organic/task_post/',
      '/v3/serp/engA/images/task_post/',
      ...['search_volume', 'keywords_for_site', 'keywords_for_keywords', 'ad_traffic_by_keywords'].flatMap((f) => [
        `/v3/keywords_data/engA_ads/${f}/live/`,
        `/v3/keywords_data/engA_ads/${f}/task_post/`,
      ]),
      ...[
        'related_keywords',
        'keyword_suggestions',
        'ranked_keywords',
        'keyword_ideas',
        'serp_competitors',
        'relevant_pages',
        'subdomains',
        'competitors_domain',
        'categories_for_domain',
        'keywords_for_categories',
        'domain_intersection',
      ].map((f) => `/v3/svc_labs/engA/${f}/live/`),
      '/v3/reviews/engA/task_post/',
      '/v3/merchant/engA/products/task_post/',
      '/v3/merchant/engA/sellers/task_post/',
      '/v3/merchant/engA/sellers/ad_url/',
      '/v3/merchant/engA/product_spec/task_post/',
      '/v3/merchant/amazon/products/task_post/',
      '/v3/merchant/amazon/asin/task_post/',
    ];
    for (const p of paths) expect(routed(await e.call('POST', p, { body: [ANY_TASK] })), p).toBe(true);
  });

  it('the ready lists and reference lists of the mapping table are served (GET)', async () => {
    const paths = [
      '/v3/serp/engA/organic/tasks_ready/',
      '/v3/serp/engA/images/tasks_ready/',
      '/v3/serp/engA/locations/',
      ...['search_volume', 'keywords_for_site', 'keywords_for_keywords', 'ad_traffic_by_keywords'].map(
        (f) => `/v3/keywords_data/engA_ads/${f}/tasks_ready/`,
      ),
      '/v3/svc_labs/locations_and_languages/',
      '/v3/reviews/engA/tasks_ready/',
      '/v3/merchant/engA/products/tasks_ready/',
      '/v3/merchant/engA/sellers/tasks_ready/',
      '/v3/merchant/engA/product_spec/tasks_ready/',
      '/v3/merchant/amazon/products/tasks_ready/',
      '/v3/merchant/amazon/asin/tasks_ready/',
    ];
    for (const p of paths) {
      const r = await e.call('GET', p);
      expect(routed(r), p).toBe(true);
      expect(succeeded(r), p).toBe(true);
    }
  });
});

describe('Endpoints: path placeholders', () => {
  const PAIRS = [
    'engA/organic',
    'engA/maps',
    'engA/news',
    'engA/events',
    'engA/images',
    'engA/search_by_image',
    'engA/jobs',
    'engA/local_finder',
    'engA/dataset_search',
    'engA/dataset_info',
    'engA/autocomplete',
    'engA/ai_mode',
    'engB/organic',
    'engC/organic',
    'engD/organic',
    'engE/organic',
    'engF/organic',
    'engG/organic',
    'engG/video_info',
    'engG/video_subtitles',
    'engG/video_comments',
  ];

  it('"`{engine}/{type}` in SERP paths uses these engine/type pairs": `task_post` and "GET /v3/serp/{engine}/{type}/tasks_fixed" are served for each', async () => {
    for (const pair of PAIRS) {
      expect(routed(await e.call('POST', `/v3/serp/${pair}/task_post`, { body: [ANY_TASK] })), pair).toBe(true);
      const fixed = await e.call('GET', `/v3/serp/${pair}/tasks_fixed`);
      expect(succeeded(fixed), pair).toBe(true);
    }
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { fetch } from 'undici';
import { receiver } from './sandbox-receiver.js';
import { DEFAULT_SANDBOX_KEY, SAMPLE_TASK_ID, startSandbox, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.js';

const LIVE_KEY = 'svc_live_testabcd1234';
const BASE = '/v3/serp/engA/organic';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const T0 = Date.parse('2026-03-02T08:00:00Z');

type Json = any; // envelopes are read field by field

interface Reply {
  status: number;
  headers: Record<string, string>;
  body: Json;
}

const running: SandboxHandle[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

/** A sandbox whose clock only moves when the test says so. */
async function sandbox(opts: SandboxOptions = {}) {
  let nowMs = T0;
  const sb = await startSandbox({ port: 0, now: () => new Date(nowMs), ...opts });
  running.push(sb);
  return {
    sb,
    advance(ms: number) {
      nowMs += ms;
    },
    async call(
      method: 'GET' | 'POST',
      path: string,
      init: { key?: string | null; body?: unknown; raw?: string; auth?: string } = {},
    ): Promise<Reply> {
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      const key = init.key === undefined ? DEFAULT_SANDBOX_KEY : init.key;
      if (init.auth) headers.Authorization = init.auth;
      else if (key !== null) headers.Authorization = `Bearer ${key}`;
      const res = await fetch(`${sb.url}${path}`, {
        method,
        headers,
        ...(method === 'POST' ? { body: init.raw ?? JSON.stringify(init.body) } : {}),
      });
      return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.json() };
    },
  };
}

const task = (keyword: string, extra: Record<string, unknown> = {}) => ({ keyword, location_code: 2840, language_code: 'en', ...extra });

function expectChargeHeaders(r: Reply, charge: string) {
  expect(r.headers['x-svc-charge-cny']).toBe(charge);
  expect(r.headers['x-svc-cost-usd']).toMatch(/^\d+\.\d{6}$/);
  expect(r.headers['x-svc-balance-cny']).toMatch(/^\d+\.\d{4}$/);
  expect(r.headers['x-svc-request-id']).toMatch(UUID);
  expect(r.headers['content-type']).toMatch(/^application\/json/);
}

describe('sandbox: authentication', () => {
  it('answers 401 with envelope 40100 for no key, a malformed key, Basic auth and a key not on the list', async () => {
    const open = await sandbox();
    const listed = await sandbox({ keys: ['svc_sandbox_only1'] });
    const replies = [
      await open.call('GET', `${BASE}/tasks_ready`, { key: null }),
      // any key after the prefix is a key (issue 16): malformed is a prefix with nothing after it
      await open.call('GET', `${BASE}/tasks_ready`, { key: 'svc_live_' }),
      await open.call('GET', `${BASE}/tasks_ready`, { key: 'sk-notours1234' }),
      await open.call('GET', `${BASE}/tasks_ready`, { auth: `Basic ${Buffer.from('user:svc_sandbox_local').toString('base64')}` }),
      await listed.call('GET', `${BASE}/tasks_ready`, { key: DEFAULT_SANDBOX_KEY }),
    ];
    for (const r of replies) {
      expect(r.status).toBe(401);
      expect(r.body.status_code).toBe(40100);
      expect(r.body.status_message).toMatch(/^You are not authorized/);
      expect(r.body.tasks).toEqual([]);
      expectChargeHeaders(r, '0.0000');
    }
    expect((await listed.call('GET', `${BASE}/tasks_ready`, { key: 'svc_sandbox_only1' })).status).toBe(200);
    expect(open.sb.log.map((l) => l.status)).toEqual([401, 401, 401, 401]);
    expect(new Set(open.sb.log.map((l) => l.requestId)).size).toBe(4);
  });
});

describe('sandbox: task_post batches and billing', () => {
  const batch = [task('trail running shoes'), task('a'.repeat(701)), task('espresso machine', { depth: 30 })];

  it('creates the valid tasks, refuses the invalid one with 40501, and charges a live key only for the valid ones', async () => {
    const { sb, call } = await sandbox();
    const r = await call('POST', `${BASE}/task_post`, { key: LIVE_KEY, body: batch });
    expect(r.status).toBe(200);
    expect(r.body.status_code).toBe(20000);
    expect(r.body.tasks_count).toBe(3);
    expect(r.body.tasks_error).toBe(1);
    expect(r.body.tasks.map((t: Json) => t.status_code)).toEqual([20100, 40501, 20100]);
    const bad = r.body.tasks[1];
    expect(bad.status_message).toContain("'keyword'");
    expect(bad.status_message).toContain('700');
    expect(bad.cost).toBe(0);
    // depth 10: 0.0043; depth 30: 0.0043 + 2 blocks × 0.0032 = 0.0107; together 0.0150 CNY
    expectChargeHeaders(r, '0.0150');
    expect(r.headers['x-svc-balance-cny']).toBe('999.9850');
    expect(sb.balanceCny()).toBe('999.9850');
    // the body's cost is raw USD (CNY / 7.2), not the charge
    expect(r.body.tasks[0].cost).toBe(0.000597);
    expect(r.body.tasks[2].cost).toBe(0.001486);
    expect(r.body.cost).toBe(0.002083);
    expect(r.headers['x-svc-cost-usd']).toBe('0.002083');
    expect(sb.log.at(-1)).toMatchObject({ method: 'POST', path: `${BASE}/task_post`, status: 200, chargeCny: '0.0150' });
    expect(sb.log.at(-1)?.requestId).toBe(r.headers['x-svc-request-id']);
  });

  it('echoes each valid task in data with api, function, se, se_type and device/os defaults', async () => {
    const { call } = await sandbox();
    const r = await call('POST', `${BASE}/task_post`, {
      body: [task('Café Latte', { tag: 'run-1:7' }), task('phone cases', { device: 'mobile' })],
    });
    const [a, b] = r.body.tasks;
    expect(a.id).toMatch(UUID);
    expect(a.id).not.toBe(b.id);
    expect(a.result).toBeNull();
    expect(a.status_message).toBe('Task Created.');
    expect(a.path).toEqual(['v3', 'serp', 'engA', 'organic', 'task_post']);
    expect(a.data).toEqual({
      api: 'serp',
      function: 'task_post',
      se: 'engA',
      se_type: 'organic',
      keyword: 'Café Latte',
      location_code: 2840,
      language_code: 'en',
      tag: 'run-1:7',
      device: 'desktop',
      os: 'windows',
    });
    expect(b.data).toMatchObject({ device: 'mobile', os: 'android' });
  });

  it('never charges a sandbox key, for the same batch', async () => {
    const { sb, call } = await sandbox();
    const r = await call('POST', `${BASE}/task_post`, { key: DEFAULT_SANDBOX_KEY, body: batch });
    expect(r.body.tasks.map((t: Json) => t.status_code)).toEqual([20100, 40501, 20100]);
    expectChargeHeaders(r, '0.0000');
    expect(r.headers['x-svc-balance-cny']).toBe('1000.0000');
    expect(sb.balanceCny()).toBe('1000.0000');
  });

  it('answers 402 / 40200 and creates nothing when the balance cannot cover the POST', async () => {
    const { sb, call, advance } = await sandbox({ balanceCny: '0.0050' });
    const r = await call('POST', `${BASE}/task_post`, { key: LIVE_KEY, body: [task('desk lamp'), task('floor lamp')] });
    expect(r.status).toBe(402);
    expect(r.body.status_code).toBe(40200);
    expect(r.body.tasks).toEqual([]);
    expectChargeHeaders(r, '0.0000');
    expect(r.headers['x-svc-balance-cny']).toBe('0.0050');
    advance(1000);
    const ready = await call('GET', `${BASE}/tasks_ready`, { key: LIVE_KEY });
    expect(ready.body.tasks[0].result).toEqual([]);
    const one = await call('POST', `${BASE}/task_post`, { key: LIVE_KEY, body: [task('desk lamp')] });
    expect(one.status).toBe(200);
    expect(one.headers['x-svc-charge-cny']).toBe('0.0043');
    expect(sb.balanceCny()).toBe('0.0007');
  });

  it('refuses a 101st task with 40006 and charges only the first 100', async () => {
    const { call } = await sandbox();
    const body = Array.from({ length: 101 }, (_, i) => task(`keyword ${i}`));
    const r = await call('POST', `${BASE}/task_post`, { key: LIVE_KEY, body });
    expect(r.body.status_code).toBe(20000);
    expect(r.body.tasks_count).toBe(101);
    expect(r.body.tasks_error).toBe(1);
    expect(r.body.tasks.slice(0, 100).every((t: Json) => t.status_code === 20100)).toBe(true);
    expect(r.body.tasks[100].status_code).toBe(40006);
    expect(r.headers['x-svc-charge-cny']).toBe('0.4300');
  });

  it('prices priority 2 at double', async () => {
    const { call } = await sandbox();
    const r = await call('POST', `${BASE}/task_post`, { key: LIVE_KEY, body: [task('standing desk', { priority: 2, depth: 20 })] });
    // (0.0043 + 0.0032) × 2
    expect(r.headers['x-svc-charge-cny']).toBe('0.0150');
  });

  it('rejects bodies that are not a non-empty JSON array of tasks', async () => {
    const { sb, call } = await sandbox();
    const notJson = await call('POST', `${BASE}/task_post`, { raw: '[{"keyword": ' });
    const notArray = await call('POST', `${BASE}/task_post`, { body: task('x') });
    const empty = await call('POST', `${BASE}/task_post`, { body: [] });
    expect([notJson.body.status_code, notArray.body.status_code, empty.body.status_code]).toEqual([40503, 40503, 40502]);
    expect(notJson.body.status_message).toMatch(/^POST data is invalid/);
    expect(sb.log.every((l) => l.chargeCny === '0.0000')).toBe(true);
  });

  it('answers 404 / 40400 for unknown paths and accepts trailing slashes', async () => {
    const { call } = await sandbox();
    const unknown = await call('GET', '/v3/serp/engZ/organic/tasks_ready');
    expect(unknown.status).toBe(404);
    expect(unknown.body.status_code).toBe(40400);
    expectChargeHeaders(unknown, '0.0000');
    expect((await call('GET', `${BASE}/task_post`)).status).toBe(404);
    const slash = await call('POST', `${BASE}/task_post/`, { body: [task('tent')] });
    expect(slash.body.tasks[0].status_code).toBe(20100);
    const engG = await call('GET', '/v3/serp/engG/organic/tasks_ready/');
    expect(engG.status).toBe(200);
  });
});

describe('sandbox: task lifecycle on the injected clock', () => {
  it('lists tasks as ready only readyAfterMs after posting, then serves and un-lists them', async () => {
    const { call, advance } = await sandbox({ readyAfterMs: 300 });
    const post = await call('POST', `${BASE}/task_post`, {
      body: [task('hiking boots', { tag: 'a' }), task('rain jacket', { depth: 30 })],
    });
    const ids: string[] = post.body.tasks.map((t: Json) => t.id);

    const early = await call('GET', `${BASE}/tasks_ready`);
    expect(early.body.tasks[0].result).toEqual([]);
    const queued = await call('GET', `${BASE}/task_get/advanced/${ids[0]}`);
    expect(queued.status).toBe(200);
    expect(queued.body.tasks[0].status_code).toBe(40602);
    expect(queued.body.tasks[0].result).toBeNull();

    advance(299);
    expect((await call('GET', `${BASE}/tasks_ready`)).body.tasks[0].result).toEqual([]);
    advance(1);
    const ready = await call('GET', `${BASE}/tasks_ready`);
    expect(ready.body.tasks_count).toBe(1);
    expect(ready.body.tasks[0].data).toMatchObject({ function: 'tasks_ready', se: 'engA', se_type: 'organic' });
    const listed = ready.body.tasks[0].result;
    expect(listed.map((t: Json) => t.id).sort()).toEqual([...ids].sort());
    const first = listed.find((t: Json) => t.id === ids[0]);
    expect(first).toEqual({
      id: ids[0],
      se: 'engA',
      se_type: 'organic',
      date_posted: '2026-03-02 08:00:00 +00:00',
      tag: 'a',
      endpoint_regular: `${BASE}/task_get/regular/${ids[0]}`,
      endpoint_advanced: `${BASE}/task_get/advanced/${ids[0]}`,
      endpoint_html: `${BASE}/task_get/html/${ids[0]}`,
    });
    // tasks of another engine are not listed for this one
    expect((await call('GET', '/v3/serp/engB/organic/tasks_ready')).body.tasks[0].result).toEqual([]);

    const got = await call('GET', first.endpoint_advanced);
    expect(got.body.tasks[0].status_code).toBe(20000);
    expectChargeHeaders(got, '0.0000');
    const again = await call('GET', `${BASE}/tasks_ready`);
    expect(again.body.tasks[0].result.map((t: Json) => t.id)).toEqual([ids[1]]);
    const refetch = await call('GET', first.endpoint_advanced);
    expect(refetch.body.tasks[0].result).toEqual(got.body.tasks[0].result);
  });

  it('returns depth organic items, rank_group 1..depth, rank_absolute 1..N in page order', async () => {
    const { call, advance } = await sandbox();
    const post = await call('POST', `${BASE}/task_post`, { body: [task('rain jacket', { depth: 30 })] });
    advance(300);
    const r = await call('GET', `${BASE}/task_get/advanced/${post.body.tasks[0].id}`);
    const res = r.body.tasks[0].result[0];
    expect(r.body.tasks[0].result_count).toBe(1);
    expect(res).toMatchObject({ keyword: 'rain jacket', type: 'organic', location_code: 2840, language_code: 'en', spell: null });
    expect(res.datetime).toBe('2026-03-02 08:00:00 +00:00');
    expect(res.items_count).toBe(res.items.length);
    expect(res.se_results_count).toBeGreaterThan(1000);
    const organic = res.items.filter((i: Json) => i.type === 'organic');
    expect(organic.map((i: Json) => i.rank_group)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(res.items.map((i: Json) => i.rank_absolute)).toEqual(Array.from({ length: res.items.length }, (_, i) => i + 1));
    expect(new Set(res.items.map((i: Json) => i.type))).toEqual(new Set(res.item_types));
    for (const item of res.items) {
      expect(typeof item.xpath).toBe('string');
      expect(['left', 'right']).toContain(item.position);
    }
    const domains = organic.map((i: Json) => i.domain.replace(/^www\./, ''));
    expect(new Set(domains).size).toBe(30);
    expect(organic[0]).toHaveProperty('is_featured_snippet', false);
    expect(organic[0].url).toMatch(/^https:\/\//);
  });

  it('answers 40401 for an unknown id and for another key’s task', async () => {
    const { call, advance } = await sandbox();
    const post = await call('POST', `${BASE}/task_post`, { body: [task('desk chair')] });
    advance(300);
    const unknown = await call('GET', `${BASE}/task_get/advanced/3f1c1111-2222-4333-8444-555566667777`);
    expect(unknown.status).toBe(200);
    expect(unknown.body.tasks[0].status_code).toBe(40401);
    expect(unknown.body.tasks_error).toBe(1);
    const foreign = await call('GET', `${BASE}/task_get/advanced/${post.body.tasks[0].id}`, { key: 'svc_sandbox_other' });
    expect(foreign.body.tasks[0].status_code).toBe(40401);
  });

  it('keeps callback tasks out of the ready list but serves them by id', async () => {
    const rx = await receiver();
    const { call, advance, sb } = await sandbox();
    const post = await call('POST', `${BASE}/task_post`, {
      body: [task('office plants', { pingback_url: `${rx.url}/ping?id=$id` }), task('cactus')],
    });
    advance(300);
    await sb.flushCallbacks();
    const ready = await call('GET', `${BASE}/tasks_ready`);
    expect(ready.body.tasks[0].result.map((t: Json) => t.id)).toEqual([post.body.tasks[1].id]);
    const got = await call('GET', `${BASE}/task_get/advanced/${post.body.tasks[0].id}`);
    expect(got.body.tasks[0].status_code).toBe(20000);
  });

  it('serves regular and html formats of the same paid task', async () => {
    const { call, advance } = await sandbox();
    const id = (await call('POST', `${BASE}/task_post`, { body: [task('pizza dough recipe')] })).body.tasks[0].id;
    advance(300);
    const adv = (await call('GET', `${BASE}/task_get/advanced/${id}`)).body.tasks[0].result[0];
    const reg = (await call('GET', `${BASE}/task_get/regular/${id}`)).body.tasks[0].result[0];
    const html = (await call('GET', `${BASE}/task_get/html/${id}`)).body.tasks[0].result[0];
    expect(reg.items.every((i: Json) => i.type === 'organic' || i.type === 'paid')).toBe(true);
    expect(reg.items.filter((i: Json) => i.type === 'organic').map((i: Json) => i.url)).toEqual(
      adv.items.filter((i: Json) => i.type === 'organic').map((i: Json) => i.url),
    );
    expect(reg.items[0]).not.toHaveProperty('highlighted');
    expect(html.items[0].html).toMatch(/^<!doctype html>/);
    const firstOrganic = adv.items.find((i: Json) => i.type === 'organic');
    expect(html.items[0].html).toContain(`href="${firstOrganic.url}"`);
  });

  it('answers the sample id with every item type of the result shapes', async () => {
    const { call } = await sandbox();
    const r = await call('GET', `${BASE}/task_get/advanced/${SAMPLE_TASK_ID}`);
    const types = new Set(r.body.tasks[0].result[0].items.map((i: Json) => i.type));
    for (const t of [
      'organic',
      'featured_snippet',
      'people_also_ask',
      'local_pack',
      'paid',
      'related_searches',
      'top_stories',
      'video',
      'images',
      'ai_overview',
      'knowledge_graph',
    ]) {
      expect(types).toContain(t);
    }
  });
});

describe('sandbox: live endpoints', () => {
  it('answers at once, charges the live price, and refuses a second task with 40000', async () => {
    const { sb, call } = await sandbox();
    const r = await call('POST', `${BASE}/live/advanced`, { key: LIVE_KEY, body: [task('usb c hub'), task('hdmi cable')] });
    expect(r.body.tasks.map((t: Json) => t.status_code)).toEqual([20000, 40000]);
    expect(r.body.tasks[0].result[0].items.filter((i: Json) => i.type === 'organic')).toHaveLength(10);
    // 0.0043 × 3.3 = 0.01419 → 0.0142
    expect(r.headers['x-svc-charge-cny']).toBe('0.0142');
    expect(sb.balanceCny()).toBe('999.9858');
    const reg = await call('POST', `${BASE}/live/regular`, { key: DEFAULT_SANDBOX_KEY, body: [task('usb c hub')] });
    expect(reg.body.tasks[0].status_code).toBe(20000);
    expect(reg.headers['x-svc-charge-cny']).toBe('0.0000');
  });
});

describe('sandbox: determinism', () => {
  async function organicDomains(seed: number): Promise<{ items: Json[]; domains: string[] }> {
    const { call } = await sandbox({ seed });
    const r = await call('POST', `${BASE}/live/advanced`, { body: [task('wireless headphones', { depth: 20 })] });
    const items = r.body.tasks[0].result[0].items;
    return { items, domains: items.filter((i: Json) => i.type === 'organic').map((i: Json) => i.domain) };
  }

  it('gives identical results for the same seed and clock, and different ranks for another seed', async () => {
    const a = await organicDomains(7);
    const b = await organicDomains(7);
    const c = await organicDomains(8);
    expect(b.items).toEqual(a.items);
    expect(c.domains).not.toEqual(a.domains);
  });

  it('lets the ledger of headers reconcile with the balance', async () => {
    const { sb, call } = await sandbox({ balanceCny: '5.0000' });
    await call('POST', `${BASE}/task_post`, { key: LIVE_KEY, body: [task('a1'), task('a2', { depth: 100 })] });
    await call('POST', `${BASE}/live/regular`, { key: LIVE_KEY, body: [task('a3', { priority: 2 })] });
    await call('GET', `${BASE}/tasks_ready`, { key: LIVE_KEY });
    const spentUnits = sb.log.reduce((sum, l) => sum + Math.round(Number(l.chargeCny) * 10_000), 0);
    expect(50_000 - spentUnits).toBe(Math.round(Number(sb.balanceCny()) * 10_000));
    // 0.0043 + (0.0043 + 9 × 0.0032) + round(0.0086 × 3.3) = 0.0043 + 0.0331 + 0.0284
    expect(sb.balanceCny()).toBe('4.9342');
  });
});

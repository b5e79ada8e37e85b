/**
 * Conformance, black box: the AI-optimized responses (suffix `.ai`) of service-interface.md
 * ("AI-optimized response (suffix `.ai`)" and "AI-optimized variants").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { charge, LIVE, sleep, startEmulator, UUID, type Emulator, type Json } from './emulator.js';

let e: Emulator;
beforeAll(async () => {
  e = await startEmulator(['--time-scale', '60', '--no-rate-limits']);
});
afterAll(() => e?.stop());

const SERP_TASK = { keyword: 'trail running shoes', location_code: 2840, language_code: 'en' };
const LABS_TASK = { keyword: 'trail running shoes', location_code: 2840, language_code: 'en' };
const LIVE_CALLS: Array<[string, Json]> = [
  ['/v3/serp/engA/organic/live/advanced', SERP_TASK],
  ['/v3/serp/engA/organic/live/regular', SERP_TASK],
  ['/v3/svc_labs/engA/related_keywords/live', LABS_TASK],
  ['/v3/svc_labs/engA/ranked_keywords/live', { target: 'shop.example', location_code: 2840, language_code: 'en' }],
  ['/v3/keywords_data/svc_trends/explore/live', { keywords: ['shoes', 'boots'], location_code: 2840 }],
  [
    '/v3/ai_optimization/ai_keyword_data/keywords_search_volume/live',
    { keywords: ['running shoes'], location_code: 2840, language_code: 'en' },
  ],
];

/** Every [key path, value] pair below `v`. */
function walk(v: Json, path = '$', out: Array<[string, Json]> = []): Array<[string, Json]> {
  out.push([path, v]);
  if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`, out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`, out);
  return out;
}

const replies = new Map<string, Json>();
async function ai(path: string, task: Json): Promise<Json> {
  if (!replies.has(path)) {
    const r = await e.call('POST', `${path}.ai`, { key: LIVE, body: [task] });
    expect(r.status, path).toBe(200);
    replies.set(path, r.body);
  }
  return replies.get(path);
}

describe('AI-optimized response (suffix .ai)', () => {
  it('"Top level: `id` (UUID string), `status_code` (integer), `status_message` (string), `items` (array)"', async () => {
    for (const [path, task] of LIVE_CALLS) {
      const b = await ai(path, task);
      expect(b.id, path).toMatch(UUID);
      expect(b.status_code, path).toBe(20000);
      expect(typeof b.status_message, path).toBe('string');
      expect(Array.isArray(b.items), path).toBe(true);
      expect(b.items.length, path).toBeGreaterThan(0);
    }
  });

  it('"Only `id`, `status_code`, `status_message` remain of the service status data."', async () => {
    for (const [path, task] of LIVE_CALLS) {
      const b = await ai(path, task);
      expect(Object.keys(b).sort(), path).toEqual(['id', 'items', 'status_code', 'status_message']);
    }
  });

  it('"Fields in `items` whose value is empty, null or false are removed."', async () => {
    for (const [path, task] of LIVE_CALLS) {
      const b = await ai(path, task);
      for (const [where, v] of walk(b.items)) {
        if (where === '$') continue;
        const empty: boolean =
          v === null ||
          v === false ||
          v === '' ||
          (Array.isArray(v) && v.length === 0) ||
          (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);
        expect(empty, `${path} ${where}`).toBe(false);
      }
    }
  });

  it('"Floats keep at most three decimals."', async () => {
    for (const [path, task] of LIVE_CALLS) {
      const b = await ai(path, task);
      for (const [where, v] of walk(b.items)) {
        if (typeof v === 'number' && !Number.isInteger(v))
          expect(Math.abs(v * 1000 - Math.round(v * 1000)), `${path} ${where}=${v}`).toBeLessThan(1e-6);
      }
    }
  });

  it('"The fields `position` and `xpath` are removed."', async () => {
    for (const [path, task] of LIVE_CALLS) {
      const b = await ai(path, task);
      for (const [where] of walk(b.items)) expect(where, path).not.toMatch(/\.(position|xpath)$/);
    }
  });

  it('"`monthly_searches` becomes an object keyed by `yyyy-mm` with integer values."', async () => {
    let seen = 0;
    for (const [path, task] of LIVE_CALLS) {
      const b = await ai(path, task);
      for (const [where, v] of walk(b.items)) {
        if (!where.endsWith('.monthly_searches')) continue;
        seen++;
        expect(Array.isArray(v), where).toBe(false);
        for (const [k, n] of Object.entries(v)) {
          expect(k).toMatch(/^\d{4}-\d{2}$/);
          expect(Number.isInteger(n)).toBe(true);
        }
      }
    }
    expect(seen).toBeGreaterThan(0);
  });

  it('"Where the endpoint supports `depth` and/or `limit` and the request omits them, they default to 10."', async () => {
    const labs = await ai('/v3/svc_labs/engA/related_keywords/live', LABS_TASK);
    expect(labs.items.length).toBeLessThanOrEqual(10);
    const serp = await ai('/v3/serp/engA/organic/live/advanced', SERP_TASK);
    expect((serp.items as Json[]).filter((i) => i.type === 'organic').length).toBeLessThanOrEqual(10);
  });
});

describe('AI-optimized variants', () => {
  it('"POST /v3/{path}.ai | AI-optimized response for the live or task-creation endpoint"; "There is no extra charge."', async () => {
    const plain = await e.call('POST', '/v3/serp/engA/organic/live/advanced', { key: LIVE, body: [{ ...SERP_TASK, depth: 10 }] });
    const suffixed = await e.call('POST', '/v3/serp/engA/organic/live/advanced.ai', { key: LIVE, body: [{ ...SERP_TASK, depth: 10 }] });
    expect(charge(suffixed)).toBe(charge(plain));
    const post = await e.call('POST', '/v3/serp/engA/organic/task_post', { key: LIVE, body: [{ ...SERP_TASK, depth: 10 }] });
    const postAi = await e.call('POST', '/v3/serp/engA/organic/task_post.ai', { key: LIVE, body: [{ ...SERP_TASK, depth: 10 }] });
    expect(postAi.body.id).toMatch(UUID);
    // open reading (README): the one status of a task-creation `.ai` reply may be the call's 20000 or the task's 20100
    expect([20000, 20100]).toContain(postAi.body.status_code);
    expect('tasks' in postAi.body).toBe(false);
    expect(charge(postAi)).toBe(charge(post));
  });

  it('"GET /v3/{path}/{id}.ai | AI-optimized response for a task-get endpoint; `{id}` is the task UUID"', async () => {
    const post = await e.call('POST', '/v3/serp/engA/organic/task_post', { body: [SERP_TASK] });
    const id = post.body.tasks[0].id as string;
    await sleep(300);
    const r = await e.call('GET', `/v3/serp/engA/organic/task_get/advanced/${id}.ai`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['id', 'items', 'status_code', 'status_message']);
    expect(r.body.items.length).toBeGreaterThan(0);
    for (const [where] of walk(r.body.items)) expect(where).not.toMatch(/\.(position|xpath)$/);
    expect(charge(r) || 0).toBe(0);
  });

  it('"The suffix works for all live endpoints and task-get endpoints" (a live endpoint of each family, and task-gets of three)', async () => {
    const live: Array<[string, Json]> = [
      ['/v3/backlinks/referring_domains/live', { target: 'shop.example' }],
      ['/v3/content_analysis/search/live', { keyword: 'trail shoes' }],
      ['/v3/domain_analytics/technologies/aggregation_technologies/live', { technology: 'nginx' }],
      ['/v3/keywords_data/engA_ads/search_volume/live', { keywords: ['rain boots'], location_code: 2840, language_code: 'en' }],
      ['/v3/svc_labs/engA/keyword_ideas/live', { keywords: ['rain boots'], location_code: 2840, language_code: 'en' }],
    ];
    for (const [path, task] of live) {
      const r = await e.call('POST', `${path}.ai`, { body: [task] });
      expect(r.status, path).toBe(200);
      expect(Object.keys(r.body).sort(), path).toEqual(['id', 'items', 'status_code', 'status_message']);
    }
    const posts: Array<[string, string, Json]> = [
      [
        '/v3/keywords_data/engA_ads/search_volume/task_post',
        '/v3/keywords_data/engA_ads/search_volume/task_get',
        { keywords: ['rain boots'], location_code: 2840, language_code: 'en' },
      ],
      [
        '/v3/merchant/engA/products/task_post',
        '/v3/merchant/engA/products/task_get/advanced',
        { keyword: 'rain boots', location_code: 2840, language_code: 'en' },
      ],
      [
        '/v3/app_data/engA/app_searches/task_post',
        '/v3/app_data/engA/app_searches/task_get/advanced',
        { keyword: 'weather', location_code: 2840, language_code: 'en' },
      ],
    ];
    const ids: string[] = [];
    for (const [post, , task] of posts) ids.push((await e.call('POST', post, { body: [task] })).body.tasks[0].id);
    await sleep(300);
    for (const [i, [, get]] of posts.entries()) {
      const r = await e.call('GET', `${get}/${ids[i]}.ai`);
      expect(r.status, get).toBe(200);
      expect(Object.keys(r.body).sort(), get).toEqual(['id', 'items', 'status_code', 'status_message']);
    }
  });

  it('"GET /v3/{path}/locations.ai | countries with default URLs"; "GET /v3/{path}/locations/{country_code}.ai | cities of that country"', async () => {
    const countries = await e.call('GET', '/v3/serp/engA/locations.ai');
    expect(countries.status).toBe(200);
    expect(countries.body.items.length).toBeGreaterThan(0);
    const cities = await e.call('GET', '/v3/serp/engA/locations/us.ai');
    expect(cities.status).toBe(200);
    expect(cities.body.items.length).toBeGreaterThan(0);
  });
});

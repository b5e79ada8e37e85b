/**
 * Conformance, black box: what a POST may carry (Limits, the events task_post parameters,
 * the AI keyword-search-volume and LLM-response requests, on_page/resources, trends, batch
 * search volume). A refused task or call is checked with the spec's success rule only
 * (the spec names no code for most of these limits; see README.md, open readings).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { charge, LIVE, SANDBOX, startEmulator, succeeded, type Emulator, type Json } from './emulator.js';

let e: Emulator;
beforeAll(async () => {
  e = await startEmulator(['--time-scale', '60', '--no-rate-limits']);
});
afterAll(() => e?.stop());

const EVENTS = '/v3/serp/engA/events/task_post';
const EV = { keyword: 'jazz concerts', location_code: 2840 };
const AIKW = '/v3/ai_optimization/ai_keyword_data/keywords_search_volume/live';
const AI_TASK = { keywords: ['running shoes'], location_code: 2840, language_code: 'en' };
const LLM = '/v3/ai_optimization/chat_llm/llm_responses/live';

/** Posts one task and returns its task object (and the reply). */
async function one(path: string, task: Json, key = SANDBOX) {
  const r = await e.call('POST', path, { key, body: [task] });
  return { r, t: r.body?.tasks?.[0] as Json };
}
const created = async (task: Json) => (await one(EVENTS, task)).t?.status_code === 20100;
const liveOk = async (path: string, task: Json) => succeeded((await one(path, task)).r);

describe('/v3 POST bodies', () => {
  it('"All `/v3` POST bodies are JSON arrays of task objects": an object body is not accepted', async () => {
    const r = await e.call('POST', EVENTS, { body: EV });
    expect(succeeded(r)).toBe(false);
  });

  it('"UTF-8 encoded": a non-ASCII keyword arrives intact (echoed in `data`)', async () => {
    const { t } = await one(EVENTS, { ...EV, keyword: 'концерты в Москве 東京' });
    expect(t.status_code).toBe(20100);
    expect(t.data.keyword).toBe('концерты в Москве 東京');
  });
});

describe('Limits: tasks per POST', () => {
  it('"Events `task_post` | ... 100 tasks per POST (extra tasks give error 40006)"', async () => {
    const hundred = await e.call('POST', EVENTS, { body: Array.from({ length: 100 }, () => EV) });
    expect(succeeded(hundred)).toBe(true);
    expect(hundred.body.tasks.every((t: Json) => t.status_code === 20100)).toBe(true);
    const more = await e.call('POST', EVENTS, { body: Array.from({ length: 101 }, () => EV) });
    expect(succeeded(more)).toBe(false);
    expect(more.body.tasks[100].status_code).toBe(40006);
    expect(more.body.tasks_error).toBe(1); // "`tasks_error` | Number of tasks that returned an error"
  });

  it('Errors table: "`/v3` task creation | more tasks in one POST than allowed | task code 40006" (the extra task is not charged)', async () => {
    const hundred = await e.call('POST', EVENTS, { key: LIVE, body: Array.from({ length: 100 }, () => EV) });
    const more = await e.call('POST', EVENTS, { key: LIVE, body: Array.from({ length: 101 }, () => EV) });
    const createdCount = (more.body.tasks as Json[]).filter((t) => t.status_code === 20100).length;
    expect(charge(more)).toBeCloseTo((charge(hundred) / 100) * createdCount, 4);
  });

  it('Sandbox rules: "up to 100 tasks per asynchronous POST" (SERP organic task_post, sandbox key)', async () => {
    const task = { keyword: 'hiking boots', location_code: 2840, language_code: 'en' };
    const hundred = await e.call('POST', '/v3/serp/engA/organic/task_post', { body: Array.from({ length: 100 }, () => task) });
    expect(hundred.body.tasks.filter((t: Json) => t.status_code === 20100)).toHaveLength(100);
    const more = await e.call('POST', '/v3/serp/engA/organic/task_post', { body: Array.from({ length: 101 }, () => task) });
    expect(more.body.tasks[100].status_code).toBe(40006);
  });
});

describe('Engine A events: task_post parameters', () => {
  it('"Response: envelope; each task has `status_code` 20100 and `result` null"', async () => {
    const { r, t } = await one(EVENTS, EV);
    expect(r.body.status_code).toBe(20000);
    expect(t.status_code).toBe(20100);
    expect(t.result).toBeNull();
  });

  it('"`keyword` | required; at most 700 characters"', async () => {
    expect(await created({ location_code: 2840 })).toBe(false);
    expect(await created({ ...EV, keyword: 'k'.repeat(700) })).toBe(true);
    expect(await created({ ...EV, keyword: 'k'.repeat(701) })).toBe(false);
    expect(await created({ ...EV, keyword: 'é'.repeat(700) })).toBe(true); // characters, not UTF-8 bytes
  });

  it('"`location_code` | required unless `location_name` or `location_coordinate` is given"', async () => {
    expect(await created({ keyword: 'jazz' })).toBe(false);
    expect(await created({ keyword: 'jazz', location_name: 'United States' })).toBe(true);
    expect(await created({ keyword: 'jazz', location_coordinate: '40.7128,-74.006,5000' })).toBe(true);
  });

  it('"`location_coordinate` | `latitude,longitude,radius`; up to 7 decimals ...; radius between 199.9 and 199999"', async () => {
    const at = (c: string) => created({ keyword: 'jazz', location_coordinate: c });
    expect(await at('40.7127753,-74.0059728,199.9')).toBe(true);
    expect(await at('40.7127753,-74.0059728,199999')).toBe(true);
    expect(await at('40.7127753,-74.0059728,199.8')).toBe(false);
    expect(await at('40.7127753,-74.0059728,200000')).toBe(false);
    expect(await at('40.71277531,-74.0059728,5000')).toBe(false);
    expect(await at('40.7127753,-74.00597281,5000')).toBe(false);
  });

  it('"`language_code` | optional; ... English (`en`) is supported"', async () => {
    expect(await created({ ...EV, language_code: 'en' })).toBe(true);
    expect(await created({ ...EV, language_name: 'English' })).toBe(true);
  });

  it('"`se_domain` | optional; chosen automatically from the location, can be set manually"', async () => {
    expect(await created({ ...EV, se_domain: 'enga.com' })).toBe(true);
  });

  it('"`depth` | optional; default 10; maximum 700"', async () => {
    expect(await created({ ...EV, depth: 700 })).toBe(true);
    expect(await created({ ...EV, depth: 701 })).toBe(false);
  });

  it('"`max_crawl_pages` | optional; maximum 100"', async () => {
    expect(await created({ ...EV, depth: 100, max_crawl_pages: 100 })).toBe(true);
    expect(await created({ ...EV, depth: 100, max_crawl_pages: 101 })).toBe(false);
  });

  it('"`priority` | optional; 1 = normal (default), 2 = high"', async () => {
    expect(await created({ ...EV, priority: 1 })).toBe(true);
    expect(await created({ ...EV, priority: 2 })).toBe(true);
    expect(await created({ ...EV, priority: 3 })).toBe(false);
  });

  it('"`os` | optional; `windows` (default) or `macos`"', async () => {
    expect(await created({ ...EV, os: 'windows' })).toBe(true);
    expect(await created({ ...EV, os: 'macos' })).toBe(true);
    expect(await created({ ...EV, os: 'linux' })).toBe(false);
  });

  it('"`date_range` | optional; `today`, `tomorrow`, `week`, `weekend`, `next_week`, `month`, `next_month`"', async () => {
    for (const date_range of ['today', 'tomorrow', 'week', 'weekend', 'next_week', 'month', 'next_month']) {
      expect(await created({ ...EV, date_range }), date_range).toBe(true);
    }
    expect(await created({ ...EV, date_range: 'yesterday' })).toBe(false);
  });

  it('"`tag` | optional; at most 255 characters; echoed in `data`"', async () => {
    const { t } = await one(EVENTS, { ...EV, tag: 't'.repeat(255) });
    expect(t.status_code).toBe(20100);
    expect(t.data.tag).toBe('t'.repeat(255));
    expect(await created({ ...EV, tag: 't'.repeat(256) })).toBe(false);
    expect(await created({ ...EV, tag: 'ü'.repeat(255) })).toBe(true);
  });

  it('"`postback_data` | string | required with `postback_url`"', async () => {
    expect(await created({ ...EV, postback_url: 'http://127.0.0.1:9/pb' })).toBe(false);
    expect(await created({ ...EV, postback_url: 'http://127.0.0.1:9/pb', postback_data: 'advanced' })).toBe(true);
  });
});

describe('Keyword-search-volume request (AI keyword data)', () => {
  it('"`keywords` | required; ... at most 1000 keywords"', async () => {
    expect(await liveOk(AIKW, { location_code: 2840, language_code: 'en' })).toBe(false);
    const kws = (n: number) => Array.from({ length: n }, (_, i) => `shoe ${i}`);
    expect(await liveOk(AIKW, { ...AI_TASK, keywords: kws(1000) })).toBe(true);
    expect(await liveOk(AIKW, { ...AI_TASK, keywords: kws(1001) })).toBe(false);
  });

  it('"each at most 250 characters" (characters, UTF-8: 250 two-byte characters pass)', async () => {
    expect(await liveOk(AIKW, { ...AI_TASK, keywords: ['a'.repeat(250)] })).toBe(true);
    expect(await liveOk(AIKW, { ...AI_TASK, keywords: ['é'.repeat(250)] })).toBe(true);
    expect(await liveOk(AIKW, { ...AI_TASK, keywords: ['a'.repeat(251)] })).toBe(false);
  });

  it('"converted to lowercase"', async () => {
    const { r } = await one(AIKW, { ...AI_TASK, keywords: ['CAFÉ Latte Shoes'] });
    expect(succeeded(r)).toBe(true);
    const result = JSON.stringify(r.body.tasks[0].result);
    expect(result).toContain('café latte shoes');
    expect(result).not.toContain('CAFÉ');
  });

  it('"`location_name` | required unless `location_code` is given"; "`language_name` | required unless `language_code` is given"', async () => {
    expect(await liveOk(AIKW, { keywords: ['shoes'], language_code: 'en' })).toBe(false);
    expect(await liveOk(AIKW, { keywords: ['shoes'], location_code: 2840 })).toBe(false);
    expect(await liveOk(AIKW, { keywords: ['shoes'], location_name: 'United States', language_name: 'English' })).toBe(true);
  });

  it('"`tag` | optional; at most 255 characters; echoed in `data` of the response"', async () => {
    const { r } = await one(AIKW, { ...AI_TASK, tag: 'x'.repeat(255) });
    expect(r.body.tasks[0].data.tag).toBe('x'.repeat(255));
    expect(await liveOk(AIKW, { ...AI_TASK, tag: 'x'.repeat(256) })).toBe(false);
  });
});

describe('LLM response request (AI optimization)', () => {
  let model: string;
  beforeAll(async () => {
    // "available names come from the models endpoint"; its shape is not shown, so the name is
    // taken from the first object of its result that has a `model_name` and is not a reasoning model.
    const r = await e.call('GET', '/v3/ai_optimization/chat_llm/llm_responses/models');
    const rows = (r.body.tasks?.[0]?.result ?? []) as Json[];
    model = (rows.find((m) => m.reasoning === false) ?? rows[0])?.model_name;
    expect(typeof model).toBe('string');
  });
  const ask = (extra: Json) => liveOk(LLM, { user_prompt: 'Name three trail running shoe brands.', model_name: model, ...extra });

  it('"`model_name` | required; a base name selects its latest version"', async () => {
    expect(await ask({})).toBe(true);
    expect(await liveOk(LLM, { user_prompt: 'hello' })).toBe(false);
  });

  it('"`user_prompt` | required; at most 500 characters"', async () => {
    expect(await liveOk(LLM, { model_name: model })).toBe(false);
    expect(await ask({ user_prompt: 'p'.repeat(500) })).toBe(true);
    expect(await ask({ user_prompt: 'p'.repeat(501) })).toBe(false);
    expect(await ask({ user_prompt: 'ß'.repeat(500) })).toBe(true);
  });

  it('"`max_output_tokens` | ... maximum 4096; minimum 1024 for reasoning models and 16 for non-reasoning models"', async () => {
    expect(await ask({ max_output_tokens: 4096 })).toBe(true);
    expect(await ask({ max_output_tokens: 4097 })).toBe(false);
    expect(await ask({ max_output_tokens: 15 })).toBe(false); // below both minima
  });

  it('"`temperature` | optional; 0 to 2"; "`top_p` | optional; 0 to 1"', async () => {
    expect(await ask({ temperature: 2.5 })).toBe(false);
    expect(await ask({ temperature: -0.1 })).toBe(false);
    expect(await ask({ top_p: 1.5 })).toBe(false);
  });

  it('"`top_p` ... cannot be combined with `temperature` in one request"', async () => {
    expect(await ask({ temperature: 0.5, top_p: 0.5 })).toBe(false);
  });
});

describe('On-page: on_page/resources request parameters', () => {
  let id: string;
  const res = (q: Json) => e.call('POST', '/v3/on_page/resources', { body: [{ id, ...q }] });
  const cond = ['resource_type', '=', 'image'];
  const filters = (n: number) => Array.from({ length: n }, () => cond).flatMap((c, i) => (i === 0 ? [c] : ['and', c]));
  beforeAll(async () => {
    const crawl = await e.call('POST', '/v3/on_page/task_post', { body: [{ target: 'shop.example', max_crawl_pages: 10 }] });
    id = crawl.body.tasks[0].id;
    await new Promise((r) => setTimeout(r, 500));
  });

  it('"`id` | string | yes | task id returned by `task_post`"', async () => {
    expect(succeeded(await e.call('POST', '/v3/on_page/resources', { body: [{ limit: 10 }] }))).toBe(false);
    expect(succeeded(await res({}))).toBe(true);
  });

  it('"`limit` | no | default 100": without `limit` at most 100 resources come back', async () => {
    const big = await e.call('POST', '/v3/on_page/task_post', { body: [{ target: 'big.example', max_crawl_pages: 200 }] });
    const bigId = big.body.tasks[0].id as string;
    await new Promise((r) => setTimeout(r, 500));
    const read = async (q: Json) =>
      (await e.call('POST', '/v3/on_page/resources', { body: [{ id: bigId, ...q }] })).body.tasks[0].result[0];
    const all = await read({ limit: 1000 });
    expect(all.items.length).toBeGreaterThan(100);
    expect((await read({})).items).toHaveLength(100);
  });

  it('"`limit` | no | default 100; maximum 1000"', async () => {
    expect(succeeded(await res({ limit: 1000 }))).toBe(true);
    expect(succeeded(await res({ limit: 1001 }))).toBe(false);
  });

  it('"`offset` | no | default 0; maximum 2000000"', async () => {
    expect(succeeded(await res({ offset: 2_000_000 }))).toBe(true);
    expect(succeeded(await res({ offset: 2_000_001 }))).toBe(false);
  });

  it('"`filters` | array | no | at most 8 conditions"', async () => {
    expect(succeeded(await res({ filters: filters(8) }))).toBe(true);
    expect(succeeded(await res({ filters: filters(9) }))).toBe(false);
  });

  it('"`order_by` | array of strings | no | format `<field>,<asc or desc>`; at most 3 rules"', async () => {
    const rules = ['size,desc', 'url,asc', 'fetch_time,desc', 'encoded_size,asc'];
    expect(succeeded(await res({ order_by: rules.slice(0, 3) }))).toBe(true);
    expect(succeeded(await res({ order_by: rules }))).toBe(false);
  });

  it('"`tag` | string | no | at most 255 characters; echoed in `data`"', async () => {
    const ok = await res({ tag: 'r'.repeat(255) });
    expect(ok.body.tasks[0].data.tag).toBe('r'.repeat(255));
    expect(succeeded(await res({ tag: 'r'.repeat(256) }))).toBe(false);
  });

  it('"A filter is an array `[field, operator, value]`" with `=`, and "`%` matches any characters in `like`"', async () => {
    const images = await res({ filters: [cond], limit: 1000 });
    const items = images.body.tasks[0].result[0].items as Json[];
    for (const it of items) expect(it.resource_type).toBe('image');
    const like = await res({ filters: [['url', 'like', '%.js']], limit: 1000 });
    for (const it of like.body.tasks[0].result[0].items as Json[]) expect(it.url.endsWith('.js')).toBe(true);
  });

  it('"Filter operators: `regex`, `not_regex`, `<`, `<=`, `>`, `>=`, `=`, `<>`, `in`, `not_in`, `like`, `not_like`"', async () => {
    const all = (await res({ limit: 1000 })).body.tasks[0].result[0].items as Json[];
    expect(all.length).toBeGreaterThan(0);
    const pick = async (f: Json[]) => {
      const r = await res({ filters: f, limit: 1000 });
      expect(succeeded(r), JSON.stringify(f)).toBe(true);
      return r.body.tasks[0].result[0].items as Json[];
    };
    const urls = (xs: Json[]) => xs.map((x) => x.url as string).sort();
    const where = (p: (x: Json) => boolean) => urls(all.filter(p));
    expect(urls(await pick([['resource_type', '<>', 'image']]))).toEqual(where((x) => x.resource_type !== 'image'));
    expect(urls(await pick([['resource_type', 'in', ['image', 'script']]]))).toEqual(
      where((x) => ['image', 'script'].includes(x.resource_type)),
    );
    expect(urls(await pick([['resource_type', 'not_in', ['image', 'script']]]))).toEqual(
      where((x) => !['image', 'script'].includes(x.resource_type)),
    );
    expect(urls(await pick([['url', 'regex', '\\.js$']]))).toEqual(where((x) => /\.js$/.test(x.url)));
    expect(urls(await pick([['url', 'not_regex', '\\.js$']]))).toEqual(where((x) => !/\.js$/.test(x.url)));
    expect(urls(await pick([['url', 'not_like', '%.js']]))).toEqual(where((x) => !x.url.endsWith('.js')));
    const sizes = all
      .map((x) => x.size)
      .filter((n) => typeof n === 'number')
      .sort((a, b) => a - b);
    const mid = sizes[Math.floor(sizes.length / 2)] as number;
    expect(urls(await pick([['size', '>', mid]]))).toEqual(where((x) => x.size > mid));
    expect(urls(await pick([['size', '>=', mid]]))).toEqual(where((x) => x.size >= mid));
    expect(urls(await pick([['size', '<', mid]]))).toEqual(where((x) => x.size < mid));
    expect(urls(await pick([['size', '<=', mid]]))).toEqual(where((x) => x.size <= mid));
  });

  it('"several filters are joined by the strings `and` or `or` placed between them"', async () => {
    const all = (await res({ limit: 1000 })).body.tasks[0].result[0].items as Json[];
    const or = await res({ filters: [['resource_type', '=', 'image'], 'or', ['resource_type', '=', 'script']], limit: 1000 });
    const got = (or.body.tasks[0].result[0].items as Json[]).map((x) => x.url).sort();
    expect(got).toEqual(
      all
        .filter((x) => x.resource_type === 'image' || x.resource_type === 'script')
        .map((x) => x.url)
        .sort(),
    );
    const and = await res({ filters: [['resource_type', '=', 'image'], 'and', ['resource_type', '=', 'script']], limit: 1000 });
    expect(and.body.tasks[0].result[0].items ?? []).toEqual([]);
  });

  it('"`order_by` ... format `<field>,<asc or desc>`"', async () => {
    const r = await res({ order_by: ['size,desc'], limit: 1000 });
    const sizes = (r.body.tasks[0].result[0].items as Json[]).map((x) => x.size as number);
    expect(sizes.length).toBeGreaterThan(1);
    expect(sizes).toEqual([...sizes].sort((a, b) => b - a));
  });

  it('"`search_after_token` | token from the previous response for deep reading": the next read continues, no overlap', async () => {
    const first = (await res({ limit: 3 })).body.tasks[0].result[0];
    expect(typeof first.search_after_token).toBe('string');
    const next = (await res({ limit: 3, search_after_token: first.search_after_token })).body.tasks[0].result[0];
    const a = (first.items as Json[]).map((x) => x.url);
    const b = (next.items as Json[]).map((x) => x.url);
    expect(b.length).toBeGreaterThan(0);
    expect(b.filter((u) => a.includes(u))).toEqual([]);
  });

  it('On-page resource list: "`crawl_progress` (`in_progress` or `finished`), `crawl_status` (... all integers), `items`"; resource_type values', async () => {
    const r = (await res({ limit: 1000 })).body.tasks[0].result[0];
    expect(['in_progress', 'finished']).toContain(r.crawl_progress);
    for (const k of ['max_crawl_pages', 'pages_in_queue', 'pages_crawled', 'total_items_count', 'items_count']) {
      expect(Number.isInteger(r.crawl_status[k]), k).toBe(true);
    }
    for (const it of r.items as Json[]) expect(['script', 'image', 'stylesheet', 'broken']).toContain(it.resource_type);
  });
});

describe('Limits: trends and batch search volume', () => {
  it('Trends: "`keywords` (array of strings; up to 5 compared on a relative scale)"', async () => {
    const path = '/v3/keywords_data/svc_trends/explore/live/';
    const kws = (n: number) => ['shoes', 'boots', 'sandals', 'sneakers', 'slippers', 'clogs'].slice(0, n);
    expect(await liveOk(path, { keywords: kws(5), location_code: 2840 })).toBe(true);
    expect(await liveOk(path, { keywords: kws(6), location_code: 2840 })).toBe(false);
  });

  it('"Batch search volume (v3 keywords data) | up to 700 keywords per task at equal price"', async () => {
    const path = '/v3/keywords_data/engA_ads/search_volume/task_post/';
    const task = (n: number) => ({ keywords: Array.from({ length: n }, (_, i) => `boot ${i}`), location_code: 2840, language_code: 'en' });
    const a = await e.call('POST', path, { key: LIVE, body: [task(1)] });
    const b = await e.call('POST', path, { key: LIVE, body: [task(700)] });
    expect(a.body.tasks[0].status_code).toBe(20100);
    expect(b.body.tasks[0].status_code).toBe(20100);
    expect(charge(b)).toBe(charge(a));
    const c = await e.call('POST', path, { key: LIVE, body: [task(701)] });
    expect(c.body.tasks[0].status_code).not.toBe(20100);
  });
});

describe('tasks_ready (result-shapes)', () => {
  it('"At most 1000 per call."', async () => {
    const task = { keyword: 'rain boots', location_code: 2840, language_code: 'en' };
    for (let i = 0; i < 11; i++) {
      const r = await e.call('POST', '/v3/serp/engA/organic/task_post', { body: Array.from({ length: 100 }, () => task) });
      expect(r.body.tasks_error).toBe(0);
    }
    await new Promise((r) => setTimeout(r, 300));
    const ready = await e.call('GET', '/v3/serp/engA/organic/tasks_ready');
    expect(succeeded(ready)).toBe(true);
    const n = (ready.body.tasks[0].result as Json[]).length;
    expect(n).toBeGreaterThan(0);
    expect(n).toBeLessThanOrEqual(1000);
  });
});

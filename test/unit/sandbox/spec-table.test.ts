import { describe, expect, it } from 'vitest';
import { ENDPOINTS as CLIENT_ENDPOINTS } from '../../../src/catalog/index.js';
import { checkRequest, ENDPOINTS, endpointById, matchEndpoint } from '../../../src/sandbox/spec/index.js';

/**
 * The emulator reads the spec on its own (src/sandbox/spec); the client reads it in
 * src/catalog. This test sets the two tables side by side: every difference must be one of
 * those listed here, each a point where the two readings of the spec disagree.
 */
const row = (e: (typeof ENDPOINTS)[number] | (typeof CLIENT_ENDPOINTS)[number]) => ({
  id: e.id,
  method: e.method,
  path: e.path,
  api: e.api,
  family: e.family,
  mode: e.mode,
  format: e.format,
  callbacks: e.callbacks,
  charged: e.charged,
  ai: e.ai,
  resultKind: e.resultKind,
  maxTasksPerPost: e.maxTasksPerPost,
});

/** Where the rows differ on purpose: the emulator reads the spec's words, the client chose otherwise. */
const KNOWN: Record<string, Partial<ReturnType<typeof row>>> = Object.fromEntries(
  CLIENT_ENDPOINTS.filter((e) => e.mode === 'utility' && e.method === 'POST' && /\/(errors|id_list)$/.test(e.path)).map((e) => [
    e.id,
    // "POST /v3/{api}/errors | array of error-query objects" (no count): the client sends 1 a POST.
    { maxTasksPerPost: undefined },
  ]),
);

/**
 * Rows the client's catalog has and the emulator does not: Versioning 6, "Images |
 * `/v3/serp/engA/images/task_post/`, `tasks_ready/`, `task_get/advanced/`" (advanced only;
 * the catalog assumes organic's three formats and live regular for every SERP type).
 */
const CLIENT_ONLY = new Set(['serp.engA.images.task_get.regular', 'serp.engA.images.task_get.html', 'serp.engA.images.live.regular']);

describe("the emulator's endpoint table (src/sandbox/spec) against the client's catalog", () => {
  it('has the same endpoints, ids unique, except the listed rows', () => {
    expect(new Set(ENDPOINTS.map((e) => e.id)).size).toBe(ENDPOINTS.length);
    const client = CLIENT_ENDPOINTS.map((e) => e.id);
    expect(client.filter((id) => CLIENT_ONLY.has(id)).sort()).toEqual([...CLIENT_ONLY].sort());
    expect(ENDPOINTS.map((e) => e.id).sort()).toEqual(client.filter((id) => !CLIENT_ONLY.has(id)).sort());
  });

  it('agrees row by row, except the listed readings', () => {
    for (const c of CLIENT_ENDPOINTS) {
      if (CLIENT_ONLY.has(c.id)) continue;
      expect(row(endpointById(c.id)), c.id).toEqual({ ...row(c), ...KNOWN[c.id] });
    }
  });

  it('routes the paths the spec writes, with .ai, trailing slashes, task ids and the image model', () => {
    expect(matchEndpoint('POST', '/v3/serp/engA/organic/task_post/')?.endpoint.id).toBe('serp.engA.organic.task_post');
    const get = matchEndpoint('GET', '/v3/serp/engA/organic/task_get/advanced/0b0b0b0b-0000-4000-8000-00000000000b.ai');
    expect(get).toMatchObject({
      endpoint: { id: 'serp.engA.organic.task_get.advanced' },
      ai: true,
      taskId: '0b0b0b0b-0000-4000-8000-00000000000b',
    });
    expect(matchEndpoint('POST', '/v1/chat/completions', { model: 'imgmodel-3.1-flash-image' })?.endpoint.id).toBe(
      'v1.chat.completions.image',
    );
    expect(matchEndpoint('POST', '/v1/chat/completions', { model: 'chat5.6-luna' })?.endpoint.id).toBe('v1.chat.completions');
    expect(matchEndpoint('GET', '/v3/appendix/user_data.ai')?.ai ?? false).toBe(false);
    expect(matchEndpoint('POST', '/v3/serp/engZ/organic/task_post')).toBeUndefined();
  });
});

/**
 * The request rules side by side: for sample tasks of each request table, the emulator's
 * rules (src/sandbox/spec/limits.ts) and the client's schemas (src/catalog) must accept and
 * refuse alike, except on the listed inputs, where the two readings of the spec differ.
 */
describe("the emulator's request rules against the client's schemas", () => {
  const e700 = '😀'.repeat(700); // 700 characters as the spec counts them, 1400 UTF-16 units
  const samples: Record<string, Array<Record<string, unknown>>> = {
    'serp.engA.organic.task_post': [
      { keyword: 'shoes', location_code: 2840 },
      { keyword: 'shoes' },
      { keyword: '', location_code: 2840 },
      { keyword: 'x'.repeat(701), location_code: 2840 },
      { keyword: '%25'.repeat(700), location_code: 2840 }, // 700 characters once decoded
      { keyword: e700, location_code: 2840 },
      { keyword: 'a', location_name: 'United States', depth: 700, priority: 2 },
      { keyword: 'a', location_code: 2840, depth: 701 },
      { keyword: 'a', location_code: 2840, depth: 0 },
      { keyword: 'a', location_code: 2840, priority: 3 },
      { keyword: 'a', location_code: 2840, device: 'mobile', os: 'windows' },
      { keyword: 'a', location_code: 2840, device: 'mobile', os: 'ios' },
      { keyword: 'a', location_coordinate: '40.7128,-74.006,200' },
      { keyword: 'a', location_coordinate: '40.7128,-74.006,100' },
      { keyword: 'a', location_code: 2840, language_code: 'e' },
      { keyword: 'a', location_code: 2840, postback_url: 'http://127.0.0.1/p' },
      { keyword: 'a', location_code: 2840, postback_url: 'http://127.0.0.1/p', postback_data: 'html' },
      { keyword: 'a', location_code: 2840, pingback_url: 'not a url' },
      { keyword: 'a', location_code: 2840, tag: 't'.repeat(256) },
      { keyword: 'a', location_code: 2840, target: 'example.com', some_field: 1 },
    ],
    'serp.engA.events.task_post': [
      { keyword: 'concerts', location_code: 2840 },
      { keyword: 'concerts', location_code: 2840, device: 'desktop' },
      { keyword: 'concerts', location_code: 2840, os: 'android' },
      { keyword: 'concerts', location_code: 2840, date_range: 'week', max_crawl_pages: 100 },
      { keyword: 'concerts', location_code: 2840, max_crawl_pages: 101 },
      { keyword: 'concerts', location_code: 2840, postback_url: 'http://127.0.0.1/p', postback_data: 'regular' },
      { keyword: 'concerts', location_code: 2840, bogus: true },
    ],
    'keywords_data.engA_ads.search_volume.task_post': [
      { keywords: ['a'], location_code: 2840 },
      { keywords: [] },
      { keywords: Array.from({ length: 700 }, (_, i) => `k${i}`) },
      { keywords: Array.from({ length: 701 }, (_, i) => `k${i}`) },
      { keywords: [''] },
      { keywords: 'a' },
    ],
    'keywords_data.svc_trends.explore.live': [
      { keywords: ['a', 'b', 'c', 'd', 'e'], date_from: '2026-01-01', date_to: '2026-01-01' },
      { keywords: ['a', 'b', 'c', 'd', 'e', 'f'] },
      { keywords: ['a'], date_from: '2026-02-30' },
      { keywords: ['a'], date_from: '2026-02-01', date_to: '2026-01-01' },
    ],
    'ai_optimization.ai_keyword_data.keywords_search_volume.live': [
      { keywords: ['a'], location_code: 2840, language_code: 'en' },
      { keywords: ['a'], location_code: 2840 },
      { keywords: ['a'], language_name: 'English' },
      { keywords: ['x'.repeat(251)], location_code: 2840, language_code: 'en' },
      { keywords: ['😀'.repeat(250)], location_code: 2840, language_code: 'en' }, // both count code points (zod's max does)
      { keywords: ['😀'.repeat(251)], location_code: 2840, language_code: 'en' },
    ],
    'ai_optimization.chat_llm.llm_responses.live': [
      { user_prompt: 'hi', model_name: 'm' },
      { user_prompt: 'x'.repeat(501), model_name: 'm' },
      { user_prompt: '😀'.repeat(500), model_name: 'm', tag: '😀'.repeat(255) },
      { user_prompt: 'hi', model_name: 'm', max_output_tokens: 15 },
      { user_prompt: 'hi', model_name: 'm', max_output_tokens: 4097 },
      { user_prompt: 'hi', model_name: 'm', temperature: 1, top_p: 0.5 },
      { user_prompt: 'hi', model_name: 'm', temperature: 2.5 },
      { user_prompt: 'hi' },
    ],
    'on_page.resources': [
      { id: 'x' },
      { id: 'x', limit: 1001 },
      { id: 'x', offset: 2_000_001 },
      { id: 'x', order_by: ['size,desc', 'url,asc', 'a,asc', 'b,asc'] },
      { id: 'x', order_by: ['size,up'] },
      { id: 'x', filters: [['size', '>', 1], 'and', ['url', 'like', '%x%']] },
      { id: 'x', filters: [['size', '~', 1]] },
      { id: 'x', filters: Array.from({ length: 17 }, (_, i) => (i % 2 ? 'and' : ['size', '>', i])) },
      { id: 'x', other: 1 },
    ],
    'on_page.task_post': [{ target: 'example.com' }, { target: '' }, {}],
    'v1.embeddings': [
      { model: 'text-embedding-3-small', input: 'a' },
      { model: 'text-embedding-3-small', input: [] },
      { model: 'text-embedding-ada-002', input: 'a', dimensions: 10 },
      { model: 'text-embedding-3-small', input: 'a', dimensions: 1537 },
      { model: 'text-embedding-3-large', input: 'a', dimensions: 3072, encoding_format: 'base64' },
      { model: 'text-embedding-3-small', input: 'a', extra: 1 },
    ],
    'v1.chat.completions.image': [
      { model: 'imgmodel-3.1-flash-image', messages: [{ role: 'user', content: 'a cat' }], size: '4096x4096' },
      { model: 'imgmodel-3.1-flash-image', messages: [{ role: 'user', content: 'a cat' }], size: '4097x10' },
      { model: 'imgmodel-3.1-flash-image', messages: [{ role: 'user', content: 'a cat' }], n: 2 },
      { model: 'imgmodel-3.1-flash-image', messages: [{ role: 'user', content: 'a cat' }], stream: true },
    ],
    'v1.chat.completions': [
      { model: 'chat5.4-mini', messages: [{ role: 'user', content: 'hi' }] },
      { model: 'gpt-4', messages: [{ role: 'user', content: 'hi' }] },
      { model: 'chat5.6-luna', messages: [] },
      { model: 'chat5.6-luna', messages: [{ role: 'robot', content: 'hi' }] },
    ],
  };

  /** Inputs the two readings judge differently, with the spec's words that decide. */
  // Where the two readings disagree, each entry says whose reading the spec's words take. None today: the
  // events table's "at most 700 characters" is counted in code points on both sides.
  const DIFFER = new Set<string>([]);

  it('accept and refuse alike, except where the spec’s words decide against the client', () => {
    const seen: string[] = [];
    for (const [id, tasks] of Object.entries(samples)) {
      const client = CLIENT_ENDPOINTS.find((e) => e.id === id)!;
      const emulator = endpointById(id);
      for (const task of tasks) {
        const c = client.request!.safeParse(task).success;
        const r = checkRequest(emulator.request!, task);
        const s = r.issues.length === 0 && r.unknownFields.length === 0;
        const key = `${id} ${JSON.stringify(task)}`;
        if (DIFFER.has(key)) {
          expect([c, s], key).toEqual([false, true]);
          seen.push(key);
        } else expect(s, key).toBe(c);
      }
    }
    expect(seen.sort()).toEqual([...DIFFER].sort());
  });
});

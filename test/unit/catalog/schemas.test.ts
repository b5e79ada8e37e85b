import { describe, expect, it } from 'vitest';
import { endpoint, formatSpecDatetime, imageTier } from '../../../src/catalog/index.js';

/** Field paths of the issues a schema reports for a value ('' when it passes). */
function fails(id: string, value: unknown): string[] {
  const r = endpoint(id).request!.safeParse(value);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

const kw = (n: number, len = 5) => Array.from({ length: n }, (_, i) => `k${i}`.padEnd(len, 'x'));

describe('SERP and events tasks', () => {
  it('accepts a minimal organic task, target, and fields the spec does not list (the client warns about those)', () => {
    expect(fails('serp.engA.organic.task_post', { keyword: 'a', location_code: 2840 })).toEqual([]);
    expect(fails('serp.engA.organic.task_post', { keyword: 'a', location_code: 2840, target: 'nike.com' })).toEqual([]);
    expect(fails('serp.engA.organic.task_post', { keyword: 'a', location_code: 2840, calculate_rectangles: true })).toEqual([]);
    expect(fails('serp.engA.organic.task_post', { keyword: 'a', location_code: 2840, target: '' }).join()).toMatch(/target/);
  });

  it('needs one of three location fields, and a radius in range', () => {
    expect(fails('serp.engA.maps.task_post', { keyword: 'a' }).join()).toMatch(
      /location_code: one of location_code, location_name or location_coordinate/,
    );
    expect(fails('serp.engA.organic.live.advanced', { keyword: 'a', location_coordinate: '52.5,13.4,100' }).join()).toMatch(
      /radius between 199.9 and 199999/,
    );
    expect(fails('serp.engA.organic.live.advanced', { keyword: 'a', location_coordinate: '52.12345678,13.4,200' }).join()).toMatch(
      /7 decimals/,
    );
  });

  it('applies the events table: keyword 700, depth 700, max_crawl_pages 100, os, date_range, postback', () => {
    const base = { keyword: 'concerts', location_code: 2840 };
    expect(fails('serp.engA.events.task_post', base)).toEqual([]);
    expect(fails('serp.engA.events.task_post', { ...base, keyword: 'x'.repeat(701) }).join()).toMatch(/keyword: at most 700/);
    expect(fails('serp.engA.events.task_post', { ...base, depth: 701 }).join()).toMatch(/depth/);
    expect(fails('serp.engA.events.task_post', { ...base, max_crawl_pages: 101 }).join()).toMatch(/max_crawl_pages: at most 100/);
    expect(fails('serp.engA.events.task_post', { ...base, os: 'android' }).join()).toMatch(/^os/);
    expect(fails('serp.engA.events.task_post', { ...base, date_range: 'yesterday' }).join()).toMatch(/date_range/);
    expect(fails('serp.engA.events.task_post', { ...base, postback_url: 'https://cb.example/p?id=$id' }).join()).toMatch(
      /postback_data: required with postback_url/,
    );
    expect(fails('serp.engA.events.task_post', { ...base, tag: 't'.repeat(256) }).join()).toMatch(/tag: at most 255/);
  });

  it('lets the other SERP types carry their own fields', () => {
    expect(fails('serp.engA.autocomplete.task_post', { keyword: 'a', location_code: 1, cursor_pointer: 3 })).toEqual([]);
  });
});

describe('keyword data', () => {
  it('search volume takes up to 700 keywords per task', () => {
    expect(fails('keywords_data.engA_ads.search_volume.task_post', { keywords: kw(700) })).toEqual([]);
    expect(fails('keywords_data.engA_ads.search_volume.task_post', { keywords: kw(701) }).join()).toMatch(/keywords: at most 700/);
  });

  it('AI keyword volume: 1000 keywords of 250 characters, location and language by name or code', () => {
    const id = 'ai_optimization.ai_keyword_data.keywords_search_volume.live';
    const ok = { keywords: kw(1000, 250), location_code: 2840, language_name: 'English' };
    expect(fails(id, ok)).toEqual([]);
    expect(fails(id, { ...ok, keywords: kw(1001) }).join()).toMatch(/at most 1000 keywords/);
    expect(fails(id, { ...ok, keywords: ['x'.repeat(251)] }).join()).toMatch(/keywords.0: at most 250 characters/);
    expect(fails(id, { keywords: ['a'], language_code: 'en' }).join()).toMatch(/location_name: location_name or location_code is required/);
    expect(fails(id, { keywords: ['a'], location_name: 'United States' }).join()).toMatch(/language_name or language_code/);
  });

  it('trends compare at most 5 keywords over a valid date range', () => {
    const id = 'keywords_data.svc_trends.merged_data.live';
    expect(fails(id, { keywords: kw(5), date_from: '2026-01-01', date_to: '2026-02-01' })).toEqual([]);
    expect(fails(id, { keywords: kw(6) }).join()).toMatch(/at most 5 keywords/);
    expect(fails(id, { keywords: ['a'], date_from: '2026-02-30' }).join()).toMatch(/date_from: not a calendar date/);
    expect(fails(id, { keywords: ['a'], date_from: '2026-03-01', date_to: '2026-02-01' }).join()).toMatch(/date_to/);
  });
});

describe('LLM responses', () => {
  const id = 'ai_optimization.chat_llm.llm_responses.live';
  const base = { user_prompt: 'what is a search engine', model_name: 'chat-model-4' };
  it('applies prompt length, token bounds and ranges', () => {
    expect(fails(id, { ...base, max_output_tokens: 16, temperature: 2 })).toEqual([]);
    expect(fails(id, { ...base, user_prompt: 'x'.repeat(501) }).join()).toMatch(/user_prompt: at most 500/);
    expect(fails(id, { ...base, max_output_tokens: 4097 }).join()).toMatch(/at most 4096/);
    expect(fails(id, { ...base, max_output_tokens: 15 }).join()).toMatch(/at least 16/);
    expect(fails(id, { ...base, temperature: 2.1 }).join()).toMatch(/temperature: between 0 and 2/);
    expect(fails(id, { ...base, top_p: 1.1 }).join()).toMatch(/top_p: between 0 and 1/);
  });

  it('refuses temperature with top_p; reasoning-model rules are left to the models list, not guessed from a name', () => {
    expect(fails(id, { ...base, temperature: 1, top_p: 0.5 }).join()).toMatch(/top_p: cannot be combined with temperature/);
    // 'o3-mini' may or may not reason: only llm_responses/models says (the llm_responses job preflight, src/jobs/kinds/llm-responses.ts).
    const named = { ...base, model_name: 'o3-mini' };
    expect(fails(id, { ...named, max_output_tokens: 512 })).toEqual([]);
    expect(fails(id, { ...named, temperature: 0.5 })).toEqual([]);
  });
});

describe('utilities', () => {
  const t = (d: Date) => formatSpecDatetime(d);
  const now = new Date('2026-11-21T12:00:00Z');
  const ago = (days: number) => new Date(now.getTime() - days * 86_400_000);

  it('errors: limit 1-1000, offset up to 100000000, datetime format and order', () => {
    expect(fails('serp.errors', { limit: 1000, offset: 100_000_000, filtered_function: 'pingback_url' })).toEqual([]);
    expect(fails('serp.errors', { limit: 0 }).join()).toMatch(/limit: between 1 and 1000/);
    expect(fails('serp.errors', { offset: 100_000_001 }).join()).toMatch(/offset/);
    expect(fails('serp.errors', { datetime_from: '2026-11-20T00:00:00Z' }).join()).toMatch(/yyyy-mm-dd hh-mm-ss \+00:00/);
    expect(fails('serp.errors', { datetime_from: t(ago(1)), datetime_to: t(ago(2)) }).join()).toMatch(/datetime_to: must be later/);
  });

  it('errors and id_list look-back windows use the injected clock', () => {
    const errors = endpoint('merchant.errors').timeRules!;
    expect(errors({ datetime_from: t(ago(6)) }, now)).toEqual([]);
    expect(errors({ datetime_from: t(ago(8)) }, now).map((i) => i.message)).toEqual(['not earlier than 7 days ago']);
    expect(errors({ datetime_to: t(new Date(now.getTime() + 60_000)) }, now).map((i) => i.path[0])).toEqual(['datetime_to']);
    const idList = endpoint('serp.id_list').timeRules!;
    expect(idList({ datetime_from: t(ago(40)), datetime_to: t(now) }, now)).toEqual([]);
    expect(idList({ datetime_from: t(ago(40)), datetime_to: t(now), include_metadata: true }, now)[0]!.message).toMatch(/1 month/);
    expect(idList({ datetime_from: t(ago(200)), datetime_to: t(now) }, now)[0]!.message).toMatch(/6 months/);
  });

  it('id_list: both datetimes, sort asc|desc', () => {
    expect(fails('serp.id_list', { datetime_from: t(ago(2)), datetime_to: t(ago(1)), sort: 'desc', include_metadata: true })).toEqual([]);
    expect(fails('serp.id_list', { datetime_to: t(ago(1)) }).join()).toMatch(/datetime_from/);
    expect(fails('serp.id_list', { datetime_from: t(ago(2)), datetime_to: t(ago(1)), sort: 'up' }).join()).toMatch(/sort/);
  });

  it('webhook_resend takes task UUIDs', () => {
    expect(fails('appendix.webhook_resend', { id: '01234567-89ab-4cde-8f01-23456789abcd' })).toEqual([]);
    expect(fails('appendix.webhook_resend', { id: 'nope' }).join()).toMatch(/id: a task id/);
  });
});

describe('on-page resources', () => {
  const id = 'on_page.resources';
  it('limit, offset, order_by, filters and their joins', () => {
    const ok = {
      id: 'task',
      limit: 1000,
      offset: 2_000_000,
      order_by: ['size,desc', 'fetch_timing.duration_time,asc'],
      filters: [['resource_type', '=', 'image'], 'and', [['size', '>', 100], 'or', ['checks.is_broken', '=', true]]],
    };
    expect(fails(id, ok)).toEqual([]);
    expect(fails(id, { id: 'task', filters: ['resource_type', '=', 'image'] })).toEqual([]);
    expect(fails(id, { ...ok, limit: 1001 }).join()).toMatch(/limit: at most 1000/);
    expect(fails(id, { ...ok, offset: 2_000_001 }).join()).toMatch(/offset: at most 2000000/);
    expect(fails(id, { ...ok, order_by: ['a,asc', 'b,asc', 'c,asc', 'd,asc'] }).join()).toMatch(/at most 3 rules/);
    expect(fails(id, { ...ok, order_by: ['size'] }).join()).toMatch(/<field>,<asc or desc>/);
    expect(fails(id, { id: 'task', filters: [['size', '!=', 1]] }).join()).toMatch(/filters.0.1: operator must be one of/);
    expect(fails(id, { id: 'task', filters: [['a', '=', 1], 'xor', ['b', '=', 1]] }).join()).toMatch(/filters.1: conditions are joined/);
    const nine = Array.from({ length: 9 }, (_, i) => ['size', '>', i]).flatMap((c, i) => (i ? ['and', c] : [c]));
    expect(fails(id, { id: 'task', filters: nine }).join()).toMatch(/filters: at most 8 conditions/);
    expect(fails(id, { id: 'task', relevant_pages_filters: nine }).join()).toMatch(/relevant_pages_filters: at most 8/);
  });
});

describe('/v1 bodies', () => {
  it('chat takes terra, luna and the legacy aliases', () => {
    const messages = [{ role: 'user', content: 'hi' }];
    for (const model of ['chat5.6-terra', 'chat5.6-luna', 'chat5.4', 'chat5.4-mini']) {
      expect(fails('v1.chat.completions', { model, messages }), model).toEqual([]);
    }
    expect(fails('v1.chat.completions', { model: 'gpt-4', messages }).join()).toMatch(/model: one of chat5.6-terra/);
    expect(fails('v1.chat.completions', { model: 'chat5.6-luna', messages: [] }).join()).toMatch(/at least one message/);
  });

  it('image generation: n 1, stream false, size up to 4K with its tier', () => {
    const id = 'v1.chat.completions.image';
    const base = { model: 'imgmodel-3.1-flash-image', messages: [{ role: 'user', content: 'a cat' }] };
    expect(fails(id, { ...base, n: 1, stream: false, size: '4096x2160' })).toEqual([]);
    expect(fails(id, { ...base, n: 2 }).join()).toMatch(/n: fixed at 1/);
    expect(fails(id, { ...base, stream: true }).join()).toMatch(/stream: must be false/);
    expect(fails(id, { ...base, size: '4097x100' }).join()).toMatch(/size/);
    expect(fails(id, { ...base, size: '1024*1024' }).join()).toMatch(/size/);
    expect(imageTier('512x300')?.tier).toBe('0.5K');
    expect(imageTier('1024x1024')?.tier).toBe('1K');
    expect(imageTier('1025x10')?.tier).toBe('2K');
    expect(imageTier('3000x4096')?.tier).toBe('4K');
  });

  it('embeddings: dimensions only for text-embedding-3-*, float or base64', () => {
    expect(
      fails('v1.embeddings', { model: 'text-embedding-3-small', input: ['a', 'b'], dimensions: 256, encoding_format: 'base64' }),
    ).toEqual([]);
    expect(fails('v1.embeddings', { model: 'text-embedding-ada-002', input: 'a', dimensions: 256 }).join()).toMatch(
      /dimensions: only text-embedding-3-\*/,
    );
    expect(fails('v1.embeddings', { model: 'text-embedding-3-small', input: 'a', dimensions: 1537 }).join()).toMatch(/at most 1536/);
    expect(fails('v1.embeddings', { model: 'text-embedding-3-small', input: 'a', encoding_format: 'int8' }).join()).toMatch(
      /float or base64/,
    );
    expect(fails('v1.embeddings', { model: 'text-embedding-3-small', input: [] }).join()).toMatch(/input/);
  });
});

import OpenAI from 'openai';
import { fetch } from 'undici';
import { describe, expect, it } from 'vitest';
import { harness, LIVE_KEY, SERP, serpTask, type Json } from './sandbox-harness.js';
import { receiver } from './sandbox-receiver.js';

/** The emulator rules of issue 16 ("The emulator as the spec describes it"), each against the emulator on loopback. */

const LLM = '/v3/ai_optimization/chat_llm/llm_responses/live';
const SPEC_DASHED = /^\d{4}-\d{2}-\d{2} \d{2}-\d{2}-\d{2} \+00:00$/;

async function crawl(maxPages = 60) {
  const h = await harness();
  const post = await h.call('POST', '/v3/on_page/task_post', {
    key: LIVE_KEY,
    body: [{ target: 'shop.example', max_crawl_pages: maxPages }],
  });
  const id = post.body.tasks[0].id as string;
  h.advance(400);
  const read = async (kind: string, q: Json = {}) =>
    (await h.call('POST', `/v3/on_page/${kind}`, { key: LIVE_KEY, body: [{ id, limit: 1000, ...q }] })).body.tasks[0];
  return { ...h, read };
}

describe('emulator: text chat streams (stream: true)', () => {
  it('streams the same answer as standard server-sent events to a standard client, usage last, charged as unstreamed', async () => {
    const { sb } = await harness();
    const ai = new OpenAI({ apiKey: LIVE_KEY, baseURL: `${sb.url}/v1`, maxRetries: 0 });
    const messages = [{ role: 'user' as const, content: 'Summarize why trail running shoes need grip.' }];
    const whole = await ai.chat.completions.create({ model: 'chat5.6-terra', messages });
    const stream = await ai.chat.completions.create({
      model: 'chat5.6-terra',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: Json;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      expect(chunk.object).toBe('chat.completion.chunk');
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(chunks).toBeGreaterThan(3);
    expect(text).toBe(whole.choices[0]!.message.content);
    expect(finish).toBe('stop');
    expect(usage).toEqual(whole.usage);
    expect(sb.log.map((l) => l.chargeCny)).toEqual([sb.log[0]!.chargeCny, sb.log[0]!.chargeCny]);
    expect(Number(sb.log[1]!.chargeCny)).toBeGreaterThan(0);

    const raw = await fetch(`${sb.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${LIVE_KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'chat5.6-luna', messages, stream: true }),
    });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await raw.text()).split('\n\n').filter(Boolean);
    expect(events.every((e) => e.startsWith('data: '))).toBe(true);
    expect(events.at(-1)).toBe('data: [DONE]');
    expect(events.slice(0, -1).every((e) => !('usage' in JSON.parse(e.slice(6))))).toBe(true);
  });
});

describe('emulator: LLM output may pass max_output_tokens with web_search or a reasoning model', () => {
  it('passes the limit only then, and never for a plain model without web search', async () => {
    const { call } = await harness();
    const prompts = Array.from(
      { length: 12 },
      (_, i) => `Which running shoe suits a marathon beginner, question ${i}? Explain in detail please.`,
    );
    const out = async (task: Json) => {
      const t = (await call('POST', LLM, { body: [task] })).body.tasks[0];
      expect(t.status_code, JSON.stringify(task)).toBe(20000);
      return t.result[0] as { output_tokens: number; max_output_tokens: number };
    };
    const plain = await Promise.all(prompts.map((p) => out({ user_prompt: p, model_name: 'llm-alpha', max_output_tokens: 16 })));
    expect(plain.every((r) => r.output_tokens <= 16)).toBe(true);
    const searching = await Promise.all(
      prompts.map((p) => out({ user_prompt: p, model_name: 'llm-alpha', max_output_tokens: 16, web_search: true })),
    );
    expect(searching.filter((r) => r.output_tokens > 16).length).toBeGreaterThan(0);
    const reasoning = await Promise.all(
      prompts.map((p) => out({ user_prompt: p, model_name: 'llm-beta-thinking', max_output_tokens: 1024 })),
    );
    expect(reasoning.every((r) => r.max_output_tokens === 1024)).toBe(true);
    const over = reasoning.filter((r) => r.output_tokens > 1024).length;
    expect(over).toBeGreaterThan(0);
    expect(over).toBeLessThan(prompts.length);
  });
});

describe('emulator: on-page resources as the spec lists them', () => {
  it('applies relevant_pages_filters: only resources of pages passing them', async () => {
    const { read } = await crawl();
    const pages = (await read('pages')).result[0].items as Json[];
    const blog = new Set(pages.filter((p) => p.url.includes('/blog/')).map((p) => p.url));
    expect(blog.size).toBeGreaterThan(0);
    const all = (await read('resources')).result[0].items as Json[];
    const relevant = (await read('resources', { relevant_pages_filters: ['url', 'like', '%/blog/%'] })).result[0];
    expect(relevant.items.length).toBeGreaterThan(0);
    expect(relevant.items.length).toBeLessThan(all.length);
    expect(relevant.items.map((r: Json) => r.url)).toEqual(all.filter((r) => blog.has(r.found_on)).map((r) => r.url));
    const twoRules = (await read('resources', { relevant_pages_filters: [['url', 'like', '%/blog/%'], 'and', ['click_depth', '>', 100]] }))
      .result[0];
    expect(twoRules.items).toEqual([]);
  });

  it('holds the five crawl_status counters', async () => {
    const { read } = await crawl(40);
    const r = (await read('resources', { limit: 7, filters: ['resource_type', '=', 'image'] })).result[0];
    expect(Object.keys(r.crawl_status).sort()).toEqual([
      'items_count',
      'max_crawl_pages',
      'pages_crawled',
      'pages_in_queue',
      'total_items_count',
    ]);
    expect(r.crawl_status).toMatchObject({ max_crawl_pages: 40, pages_crawled: 40, pages_in_queue: 0, items_count: 7 });
    expect(r.crawl_status.total_items_count).toBeGreaterThan(7);
    expect(r.crawl_status.total_items_count).toBe(r.total_items_count);
  });

  it('puts resource fields at the top level: alt text and title with variations, sizes, all 13 checks, the holding page status', async () => {
    const { read } = await crawl(100);
    const pages = (await read('pages')).result[0].items as Json[];
    const status = new Map(pages.map((p) => [p.url, p.status_code]));
    const items = (await read('resources')).result[0].items as Json[];
    const fields = [
      'alternative_text',
      'alternative_text_variations',
      'title',
      'alternative_title_variations',
      'original_width',
      'original_height',
      'width',
      'height',
      'size',
      'encoded_size',
      'total_transfer_size',
      'fetch_time',
      'fetch_timing',
      'cache_control',
      'checks',
      'resource_errors',
      'last_modified',
      'status_code',
      'location',
      'content_encoding',
      'media_type',
      'accept_type',
      'server',
      'from_sitemap',
    ];
    const checks = [
      'no_content_encoding',
      'high_loading_time',
      'is_redirect',
      'is_4xx_code',
      'is_5xx_code',
      'is_broken',
      'is_www',
      'is_https',
      'is_http',
      'original_size_displayed',
      'is_minified',
      'has_redirect',
      'has_subrequests',
    ];
    for (const r of items) {
      for (const f of fields) expect(r, f).toHaveProperty(f);
      expect(Object.keys(r.checks).sort()).toEqual([...checks].sort());
      expect(Object.values(r.checks).every((v) => typeof v === 'boolean')).toBe(true);
      expect(r.status_code).toBe(status.get(r.found_on));
      expect(r.fetch_time).toMatch(SPEC_DASHED);
    }
    const images = items.filter((r) => r.resource_type === 'image');
    expect(
      images.every(
        (r) =>
          typeof r.alternative_text === 'string' && r.original_width > 0 && r.width > 0 && Array.isArray(r.alternative_text_variations),
      ),
    ).toBe(true);
    expect(images.some((r) => r.alternative_text_variations.length > 0)).toBe(true);
    expect(images.some((r) => r.checks.original_size_displayed) && images.some((r) => !r.checks.original_size_displayed)).toBe(true);
    const broken = items.filter((r) => r.resource_type === 'broken');
    expect(broken.every((r) => r.checks.is_broken && r.status_code === status.get(r.found_on))).toBe(true);
    // a resource of a page that is not 200 carries that page's status (not its own)
    const off = pages.find((p) => p.status_code !== 200 && items.some((r) => r.found_on === p.url));
    expect(off).toBeDefined();
    const onOff = (await read('resources', { url: off.url })).result[0].items as Json[];
    expect(onOff.length).toBeGreaterThan(0);
    expect(onOff.every((r) => r.status_code === off.status_code)).toBe(true);
  });
});

describe('emulator: error records and keys', () => {
  it('writes error records’ datetime as yyyy-mm-dd hh-mm-ss +00:00', async () => {
    const rx = await receiver(() => ({ status: 500 }));
    const { call, advance, sb } = await harness({ faults: { taskFailure: 0.5 } });
    await call('POST', `${SERP}/task_post`, {
      body: [serpTask('a', { pingback_url: `${rx.url}/$id` }), ...Array.from({ length: 9 }, (_, i) => serpTask(`kw ${i}`))],
    });
    advance(300);
    await sb.flushCallbacks();
    const rows = (await call('POST', '/v3/serp/errors', { body: [{}] })).body.tasks[0].result as Json[];
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((r) => r.function))).toEqual(new Set(['task_post', 'pingback_url']));
    for (const row of rows) expect(row.datetime).toMatch(SPEC_DASHED);
    expect(rows.map((r) => r.datetime)).toEqual(rows.map(() => '2026-03-02 08-00-00 +00:00'));
  });

  it('takes a key of any length after the prefix, and nothing else', async () => {
    const { call } = await harness();
    const ok = ['svc_sandbox_x', 'svc_live_test1', `svc_live_${'a-B_9.'.repeat(60)}`, 'svc_sandbox_abc'];
    for (const key of ok) expect((await call('GET', '/v3/appendix/user_data', { key })).status, key).toBe(200);
    for (const key of ['svc_live_', 'svc_sandbox_', 'svc_test_abcd', 'live_abcd1234']) {
      expect((await call('GET', '/v3/appendix/user_data', { key })).status, key).toBe(401);
    }
  });
});

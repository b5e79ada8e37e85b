import { describe, expect, it } from 'vitest';
import { harness, LIVE_KEY, SERP, serpTask, type Json } from './sandbox-harness.js';

/** Every key and value of a JSON tree, for rule checks. */
function walk(v: unknown, visit: (key: string | null, value: unknown) => void, key: string | null = null): void {
  visit(key, v);
  if (Array.isArray(v)) v.forEach((x) => walk(x, visit));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, visit, k);
}

function expectAiRules(body: Json) {
  expect(Object.keys(body).sort()).toEqual(['id', 'items', 'status_code', 'status_message']);
  walk(body.items, (key, value) => {
    expect(key === 'position' || key === 'xpath', `field ${key}`).toBe(false);
    expect(value === null || value === false || value === '', `empty value at ${key}`).toBe(false);
    if (Array.isArray(value)) expect(value.length, `empty array at ${key}`).toBeGreaterThan(0);
    if (typeof value === 'number' && !Number.isInteger(value)) expect(Math.abs(value * 1000 - Math.round(value * 1000))).toBeLessThan(1e-6);
  });
}

describe('sandbox: .ai variants', () => {
  it('answers POST {live}.ai with id/status/items, every transformation rule applied, at the same charge', async () => {
    const { call } = await harness();
    const plain = await call('POST', `${SERP}/live/advanced`, { key: LIVE_KEY, body: [serpTask('coffee grinder')] });
    const ai = await call('POST', `${SERP}/live/advanced.ai`, { key: LIVE_KEY, body: [serpTask('coffee grinder')] });
    expect(ai.status).toBe(200);
    expectAiRules(ai.body);
    expect(ai.body.status_code).toBe(20000);
    expect(ai.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(ai.body.items.length).toBe(plain.body.tasks[0].result[0].items.length);
    expect(ai.headers['x-svc-charge-cny']).toBe(plain.headers['x-svc-charge-cny']);
    // plain answers keep what .ai drops
    let hasPosition = false;
    walk(plain.body, (k) => (hasPosition ||= k === 'position'));
    expect(hasPosition).toBe(true);
  });

  it('keys monthly_searches by yyyy-mm with integer values', async () => {
    const { call } = await harness();
    const ai = await call('POST', '/v3/keywords_data/engA_ads/search_volume/live.ai', {
      body: [{ keywords: ['Espresso'], location_code: 2840 }],
    });
    expectAiRules(ai.body);
    const ms = ai.body.items[0].monthly_searches;
    expect(Object.keys(ms)).toHaveLength(12);
    for (const [k, v] of Object.entries(ms)) {
      expect(k).toMatch(/^\d{4}-\d{2}$/);
      expect(Number.isInteger(v)).toBe(true);
    }
    expect(ms['2026-02']).toBeDefined();
    expect(ai.body.items[0].keyword).toBe('espresso');
  });

  it('defaults limit to 10 when an .ai request omits it (and not otherwise)', async () => {
    const { call } = await harness();
    const body = [{ target: 'runnersworld.com', location_code: 2840 }];
    const plain = (await call('POST', '/v3/svc_labs/engA/ranked_keywords/live', { body })).body.tasks[0].result[0];
    expect(plain.items.length).toBeGreaterThan(10);
    const ai = (await call('POST', '/v3/svc_labs/engA/ranked_keywords/live.ai', { body })).body;
    expect(ai.items).toHaveLength(10);
    const ai3 = (await call('POST', '/v3/svc_labs/engA/ranked_keywords/live.ai', { body: [{ ...body[0], limit: 3 }] })).body;
    expect(ai3.items).toHaveLength(3);
  });

  it('serves GET task_get/{id}.ai, locations.ai with default URLs and locations/{country}.ai', async () => {
    const { call, advance } = await harness();
    const id = (await call('POST', `${SERP}/task_post`, { body: [serpTask('tea kettle')] })).body.tasks[0].id;
    advance(300);
    const got = await call('GET', `${SERP}/task_get/advanced/${id}.ai`);
    expectAiRules(got.body);
    expect(got.body.id).toBe(id);
    const notYet = await call('GET', `${SERP}/task_get/advanced/11111111-2222-4333-8444-555555555555.ai`);
    expect(notYet.body).toMatchObject({ status_code: 40401, items: [] });
    const locs = (await call('GET', '/v3/serp/engA/locations.ai')).body;
    expect(locs.items.find((l: Json) => l.location_code === 2840).default_url).toMatch(/^https:\/\//);
    const cities = (await call('GET', '/v3/serp/engA/locations/us.ai')).body.items;
    expect(cities.length).toBeGreaterThan(0);
    expect(cities.every((c: Json) => c.location_type === 'City' && c.location_code_parent === 2840)).toBe(true);
  });
});

describe('sandbox: ai_optimization', () => {
  it('answers AI keyword search volume (lower-cased) and refuses the request-table violations', async () => {
    const { call } = await harness();
    const path = '/v3/ai_optimization/ai_keyword_data/keywords_search_volume/live';
    const ok = (await call('POST', path, { body: [{ keywords: ['Best CRM'], location_code: 2840, language_code: 'en', tag: 't' }] })).body
      .tasks[0];
    expect(ok.status_code).toBe(20000);
    expect(ok.data.tag).toBe('t');
    expect(ok.result[0].items[0]).toMatchObject({ keyword: 'best crm', ai_search_volume: expect.any(Number) });
    expect(ok.result[0].items[0].ai_monthly_searches).toHaveLength(12);
    const bad = [
      { keywords: Array.from({ length: 1001 }, (_, i) => `k${i}`), location_code: 2840, language_code: 'en' },
      { keywords: ['x'.repeat(251)], location_code: 2840, language_code: 'en' },
      { keywords: ['x'], language_code: 'en' },
      { keywords: ['x'], location_code: 2840 },
      { keywords: ['x'], location_code: 2840, language_code: 'en', tag: 't'.repeat(256) },
    ];
    for (const b of bad) expect((await call('POST', path, { body: [b] })).body.tasks[0].status_code).toBe(40501);
  });

  it('applies every rule of the LLM response request table, and a base name selects the latest version', async () => {
    const { call } = await harness();
    const path = '/v3/ai_optimization/chat_llm/llm_responses/live';
    const models = (await call('GET', '/v3/ai_optimization/chat_llm/llm_responses/models')).body.tasks[0].result;
    const plainModel = models.find((m: Json) => !m.reasoning);
    const reasoning = models.find((m: Json) => m.reasoning);
    const ok = (await call('POST', path, { body: [{ user_prompt: 'best running shoes?', model_name: plainModel.model_name }] })).body
      .tasks[0];
    expect(ok.status_code).toBe(20000);
    expect(ok.result[0]).toMatchObject({ model_name: plainModel.latest_version, max_output_tokens: 2048, temperature: 0.94 });
    const cases: Array<[Json, number]> = [
      [{ user_prompt: 'x'.repeat(501), model_name: plainModel.model_name }, 40501],
      [{ user_prompt: 'x', model_name: 'no-such-model' }, 40501],
      [{ user_prompt: 'x', model_name: plainModel.model_name, max_output_tokens: 4097 }, 40501],
      [{ user_prompt: 'x', model_name: plainModel.model_name, max_output_tokens: 15 }, 40501],
      [{ user_prompt: 'x', model_name: plainModel.model_name, max_output_tokens: 16 }, 20000],
      [{ user_prompt: 'x', model_name: reasoning.model_name, max_output_tokens: 1000 }, 40501],
      [{ user_prompt: 'x', model_name: reasoning.model_name, max_output_tokens: 1024 }, 20000],
      [{ user_prompt: 'x', model_name: reasoning.model_name, temperature: 1 }, 40501],
      [{ user_prompt: 'x', model_name: plainModel.model_name, temperature: 2.1 }, 40501],
      [{ user_prompt: 'x', model_name: plainModel.model_name, top_p: 1.1 }, 40501],
      [{ user_prompt: 'x', model_name: plainModel.model_name, temperature: 1, top_p: 0.5 }, 40501],
      [{ user_prompt: 'x', model_name: plainModel.model_name, temperature: 0.5, web_search: true }, 20000],
    ];
    for (const [task, code] of cases)
      expect((await call('POST', path, { body: [task] })).body.tasks[0].status_code, JSON.stringify(task)).toBe(code);
    const filters = (await call('GET', '/v3/ai_optimization/ai_keyword_data/available_filters')).body.tasks[0].result;
    expect(filters.length).toBeGreaterThan(0);
  });
});

import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SANDBOX_KEY } from '../../src/sandbox/index.js';
import { harness, LIVE_KEY, type Json } from './sandbox-harness.js';
import { receiver } from './sandbox-receiver.js';

const ai = (url: string, key = LIVE_KEY) => new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 });
const emb = { model: 'text-embedding-3-small', input: 'hello world' };
const img = { model: 'imgmodel-3.1-flash-image', messages: [{ role: 'user', content: 'a cat' }] } as Json;

/** The spec's Errors table, row by row: where, condition, and the HTTP status and code it must produce. */
describe('sandbox: the Errors table of the spec', () => {
  const rows: Array<[string, () => Promise<{ status: number; type?: string; code?: string }>]> = [
    [
      'image: n not 1 → 400',
      async () => ({
        status: await rejectStatus((await harness()).sb.url, (c) => c.chat.completions.create({ ...img, stream: false, n: 3 })),
      }),
    ],
    [
      'image: invalid size → 400',
      async () => ({ status: await rejectStatus((await harness()).sb.url, (c) => c.chat.completions.create({ ...img, size: '4097x10' })) }),
    ],
    [
      'image: balance below the maximum estimate → 402',
      async () => ({ status: await rejectStatus((await harness({ balanceCny: '0.0500' })).sb.url, (c) => c.chat.completions.create(img)) }),
    ],
    [
      'image: sandbox key → 403',
      async () => ({ status: await rejectStatus((await harness()).sb.url, (c) => c.chat.completions.create(img), DEFAULT_SANDBOX_KEY) }),
    ],
    [
      'image: rate exceeded → 429',
      async () => {
        const { sb } = await harness({ rateLimits: { chat: 1 } });
        await ai(sb.url).chat.completions.create(img);
        return { status: await rejectStatus(sb.url, (c) => c.chat.completions.create(img)) };
      },
    ],
    [
      'embeddings: invalid key → 401',
      async () => ({ status: await rejectStatus((await harness()).sb.url, (c) => c.embeddings.create(emb), 'svc_test_no') }),
    ],
    [
      'embeddings: insufficient balance → 402 svc_error 50002',
      async () => {
        const { sb } = await harness({ balanceCny: '0.0000' });
        const e = await ai(sb.url)
          .embeddings.create(emb)
          .catch((x) => x);
        return { status: e.status, type: e.error?.type, code: e.error?.code };
      },
    ],
    [
      'embeddings: rate exceeded → 429',
      async () => {
        const { sb } = await harness({ rateLimits: { v1_other: 1 } });
        await ai(sb.url).embeddings.create(emb);
        return { status: await rejectStatus(sb.url, (c) => c.embeddings.create(emb)) };
      },
    ],
    [
      'embeddings: bad model → 400',
      async () => ({ status: await rejectStatus((await harness()).sb.url, (c) => c.embeddings.create({ ...emb, model: 'nope' })) }),
    ],
    [
      'embeddings: gateway cannot process → 5xx (fault profile)',
      async () => ({ status: await rejectStatus((await harness({ faults: { error5xx: 1 } })).sb.url, (c) => c.embeddings.create(emb)) }),
    ],
  ];
  const expected: Record<string, (r: { status: number; type?: string; code?: string }) => void> = {
    'image: n not 1 → 400': (r) => expect(r.status).toBe(400),
    'image: invalid size → 400': (r) => expect(r.status).toBe(400),
    'image: balance below the maximum estimate → 402': (r) => expect(r.status).toBe(402),
    'image: sandbox key → 403': (r) => expect(r.status).toBe(403),
    'image: rate exceeded → 429': (r) => expect(r.status).toBe(429),
    'embeddings: invalid key → 401': (r) => expect(r.status).toBe(401),
    'embeddings: insufficient balance → 402 svc_error 50002': (r) => expect(r).toEqual({ status: 402, type: 'svc_error', code: '50002' }),
    'embeddings: rate exceeded → 429': (r) => expect(r.status).toBe(429),
    'embeddings: bad model → 400': (r) => expect(r.status).toBe(400),
    'embeddings: gateway cannot process → 5xx (fault profile)': (r) => expect([500, 502, 503]).toContain(r.status),
  };
  for (const [name, run] of rows) it(name, async () => expected[name]!(await run()));

  it('/v3 task creation: more tasks than allowed → 40006; callbacks of a function without them → 40503', async () => {
    const { call } = await harness();
    const many = await call('POST', '/v3/reviews/engA/task_post', { body: Array.from({ length: 101 }, () => ({ keyword: 'cafe' })) });
    expect(many.body.tasks[100].status_code).toBe(40006);
    const live = (await call('POST', '/v3/content_analysis/search/live', { body: [{ keyword: 'cafe' }] })).body.tasks[0].id;
    expect((await call('POST', '/v3/appendix/webhook_resend', { body: [{ id: live }] })).body.tasks[0].status_code).toBe(40503);
  });
});

describe('sandbox: callbacks outside SERP', () => {
  it('posts a keywords-data postback with the task_get envelope of that function', async () => {
    const rx = await receiver();
    const { call, advance, sb } = await harness();
    const id = (
      await call('POST', '/v3/keywords_data/engA_ads/search_volume/task_post', {
        body: [{ keywords: ['tea'], location_code: 2840, postback_url: `${rx.url}/sv?id=$id`, postback_data: 'advanced' }],
      })
    ).body.tasks[0].id;
    advance(300);
    await sb.flushCallbacks();
    expect(rx.seen).toHaveLength(1);
    expect(rx.seen[0]!.json.tasks[0].path).toEqual(['v3', 'keywords_data', 'engA_ads', 'search_volume', 'task_get', id]);
    expect(rx.seen[0]!.json.tasks[0].result[0].keyword).toBe('tea');
  });
});

async function rejectStatus(url: string, f: (c: OpenAI) => Promise<unknown>, key = LIVE_KEY): Promise<number> {
  const e = (await f(ai(url, key)).then(
    () => ({ status: 200 }),
    (x) => x,
  )) as { status: number };
  return e.status;
}

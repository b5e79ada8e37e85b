/**
 * Conformance, black box: the per-minute call limits of service-interface.md ("Limits").
 * The emulator runs at time scale 6, so a minute lasts 10 s (room for a busy machine); each `describe` below has an
 * emulator of its own, whose counters start at zero as in a fresh minute, because the spec does not say whether scopes
 * that share a row ("SERP, keyword and domain-analysis endpoints", "Backlinks, on-page") share one
 * counter or whether `id_list`/`tasks_fixed` calls also count in their API's row (README, open).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIVE, sleep, startEmulator, succeeded, type Emulator, type Reply } from './emulator.js';

const SCALE = 6;
const MINUTE_MS = 60_000 / SCALE;

let e: Emulator;
/** Registers in the calling describe an emulator of its own (no call counted yet in any scope). */
function ownEmulator(): void {
  beforeAll(async () => {
    e = await startEmulator(['--time-scale', String(SCALE), '--rate-limits']);
  });
  afterAll(() => e?.stop());
}

const many = (n: number, fn: () => Promise<Reply>) => Promise.all(Array.from({ length: n }, fn));
const freshMinute = () => sleep(MINUTE_MS + 250);

const serpPost = () =>
  e.call('POST', '/v3/serp/engA/organic/task_post', { body: [{ keyword: 'boots', location_code: 2840, language_code: 'en' }] });
const status = () => e.call('GET', '/v3/appendix/status');
const chat = () => e.call('POST', '/v1/chat/completions', { body: { model: 'chat5.6-luna', messages: [{ role: 'user', content: 'hi' }] } });
const embed = () => e.call('POST', '/v1/embeddings', { body: { model: 'text-embedding-3-small', input: 'hi' } });
const backlinks = () => e.call('POST', '/v3/backlinks/referring_domains/live', { body: [{ target: 'shop.example' }] });
const business = () =>
  e.call('POST', '/v3/business_data/engA/hotel_info/task_post', { body: [{ keyword: 'hotel', location_code: 2840, language_code: 'en' }] });
const tasksFixed = () => e.call('GET', '/v3/serp/engA/organic/tasks_fixed');
const idList = () => {
  const d = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace(/:/g, '-').slice(0, 19) + ' +00:00';
  return e.call('POST', '/v3/serp/id_list', { body: [{ datetime_from: d(Date.now() - 3600_000), datetime_to: d(Date.now() - 1000) }] });
};

/** `limit` calls in the same minute pass the success rule; the next one does not. */
async function limitHolds(limit: number, call: () => Promise<Reply>): Promise<Reply> {
  const first = await many(limit, call);
  expect(first.filter((r) => !succeeded(r)).map((r) => `${r.status} ${r.body?.status_code ?? ''}`)).toEqual([]);
  const over = await call();
  expect(succeeded(over)).toBe(false);
  return over;
}

/** Like limitHolds for `/v1`, whose success is HTTP 200. */
async function v1LimitHolds(limit: number, call: () => Promise<Reply>): Promise<Reply> {
  const first = await many(limit, call);
  expect(first.filter((r) => r.status !== 200).map((r) => r.status)).toEqual([]);
  const over = await call();
  expect(over.status).not.toBe(200);
  return over;
}

describe('Limits (first minute: scopes that share no row)', () => {
  ownEmulator();

  it('"SERP, keyword and domain-analysis endpoints | 60 per minute" (SERP task_post)', async () => {
    await limitHolds(60, serpPost);
  });

  it('"`appendix/status` | 10 per minute"', async () => {
    await limitHolds(10, status);
  });

  it('"Chat | 60 calls per minute"', async () => {
    await v1LimitHolds(60, chat);
  });

  it('"Other `/v1` | 120 per minute" and Errors: "embeddings | rate exceeded | 429"', async () => {
    const over = await v1LimitHolds(120, embed);
    expect(over.status).toBe(429);
  });

  it('the limits are per minute: a minute later `appendix/status` is served again', async () => {
    await freshMinute();
    expect(succeeded(await status())).toBe(true);
  });
});

describe('Limits (second minute)', () => {
  ownEmulator();

  it('"Backlinks, on-page | 30 per minute" (backlinks live)', async () => {
    await limitHolds(30, backlinks);
  });

  it('"Other `/v3` | 120 per minute" (business data task_post)', async () => {
    await limitHolds(120, business);
  });

  it('"`tasks_fixed` | 20 per minute"', async () => {
    await limitHolds(20, tasksFixed);
  });
});

describe('Limits (third minute)', () => {
  ownEmulator();

  it('"`{api}/id_list` | 10 per minute"', async () => {
    await limitHolds(10, idList);
  });

  it('Errors: "image generation | concurrency or rate exceeded | 429" (past either /v1 limit in one minute)', async () => {
    const img = () =>
      e.call('POST', '/v1/chat/completions', {
        key: LIVE,
        body: { model: 'imgmodel-3.1-flash-image', messages: [{ role: 'user', content: 'a kite' }], stream: false, n: 1, size: '512x512' },
      });
    const replies = await many(121, img);
    const refused = replies.filter((r) => r.status !== 200);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(r.status).toBe(429);
  });
});

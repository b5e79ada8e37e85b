import { describe, expect, it } from 'vitest';
import { sandboxOptionsFromArgs } from '../../src/cli/commands/sandbox.js';
import { serpTaskSchema } from '../../src/catalog/index.js';
import { DEFAULT_READINGS, parseReadings } from '../../src/sandbox/index.js';
import { harness, LIVE_KEY, SERP, serpTask, type Json } from './sandbox-harness.js';

const LONG_TAIL = 'waterproof trail running shoes for wide feet'; // 7 words: only 20-50 organic results exist
const cny = (s: string | undefined) => Math.round(Number(s) * 10_000);
const DAY = 86_400_000;
const stamp = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace(/:/g, '-').slice(0, 19) + ' +00:00';

describe('sandbox readings: how a refund shows (readings.ts `refunds`)', () => {
  it('task-cost (default): the done task’s cost is net; balance: the cost stays gross and only the balance moves', async () => {
    const costs: Record<string, { posted: number; got: number; refunded: number }> = {};
    for (const refunds of ['task-cost', 'balance'] as const) {
      const { call, advance, sb } = await harness({ readings: { refunds } });
      const before = cny(sb.balanceCny());
      const post = await call('POST', `${SERP}/task_post`, { key: LIVE_KEY, body: [serpTask(LONG_TAIL, { depth: 100 })] });
      expect(post.headers['x-svc-charge-cny']).toBe('0.0331'); // charged at creation under both readings
      advance(300);
      const got = await call('GET', `${SERP}/task_get/advanced/${post.body.tasks[0].id}`, { key: LIVE_KEY });
      costs[refunds] = { posted: post.body.tasks[0].cost, got: got.body.tasks[0].cost, refunded: 331 - (before - cny(sb.balanceCny())) };
    }
    expect(costs['task-cost']!.got).toBeLessThan(costs['task-cost']!.posted);
    expect(costs.balance!.got).toBe(costs.balance!.posted);
    expect(costs.balance!.refunded).toBeGreaterThan(0); // the refund is in the balance under both
    expect(costs.balance!.refunded).toBe(costs['task-cost']!.refunded);
  });

  it('balance: a live answer’s charge header is the gross price, the balance drops by the net', async () => {
    const { call, sb } = await harness({ readings: 'refunds=balance' });
    const before = cny(sb.balanceCny());
    const r = await call('POST', `${SERP}/live/advanced`, { key: LIVE_KEY, body: [serpTask(LONG_TAIL, { depth: 100 })] });
    const gross = Math.floor(((43 + 32 * 9) * 33 + 5) / 10);
    expect(cny(r.headers['x-svc-charge-cny'])).toBe(gross);
    expect(before - cny(sb.balanceCny())).toBeLessThan(gross);
  });
});

describe('sandbox readings: the body of a rate-limit refusal (readings.ts `rateLimitBody`)', () => {
  it('http429 (default): HTTP 429, top-level 40202, no tasks', async () => {
    const { call } = await harness({ rateLimits: { serp_keywords_domain: 1 } });
    await call('POST', `${SERP}/task_post`, { body: [serpTask('a')] });
    const r = await call('POST', `${SERP}/task_post`, { body: [serpTask('b')] });
    expect(r.status).toBe(429);
    expect(r.body).toMatchObject({ status_code: 40202, tasks_count: 0 });
    expect(r.headers['retry-after']).toBeDefined();
  });

  it('http200: HTTP 200, top-level 20000, each posted task echoed with 40202, nothing created or charged', async () => {
    const { call, sb } = await harness({ rateLimits: { serp_keywords_domain: 1 }, readings: { rateLimitBody: 'http200' } });
    await call('POST', `${SERP}/task_post`, { key: LIVE_KEY, body: [serpTask('a')] });
    const balance = sb.balanceCny();
    const r = await call('POST', `${SERP}/task_post`, {
      key: LIVE_KEY,
      body: [serpTask('b', { tag: 'x1' }), serpTask('c', { tag: 'x2' })],
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status_code: 20000, tasks_count: 2, tasks_error: 2 });
    expect(r.body.tasks.map((t: Json) => [t.status_code, t.data.tag])).toEqual([
      [40202, 'x1'],
      [40202, 'x2'],
    ]);
    expect(r.headers['x-svc-charge-cny']).toBe('0.0000');
    expect(r.headers['retry-after']).toBeDefined();
    expect(sb.balanceCny()).toBe(balance);
    const get = await call('GET', `${SERP}/tasks_ready`, { key: LIVE_KEY }); // the limit is per key and family
    expect([get.status, get.body.tasks[0].status_code]).toEqual([200, 40202]); // a GET gets one refused task
  });

  it('is chosen by name=value text (the CLI’s --reading), and refuses unknown names and values', () => {
    expect(parseReadings('refunds=balance,rateLimitBody=http200')).toEqual({
      ...DEFAULT_READINGS,
      refunds: 'balance',
      rateLimitBody: 'http200',
    });
    expect(parseReadings(undefined)).toMatchObject({ refunds: 'task-cost', rateLimitBody: 'http429' });
    expect(() => parseReadings('refunds=later')).toThrow(/task-cost, balance/);
    expect(() => parseReadings('keywordLength=as-sent')).toThrow(/switchable readings are refunds, rateLimitBody, asyncTasksPerPost/);
    const base = {
      port: 0,
      host: '127.0.0.1',
      seed: 1,
      'ready-after': 2,
      balance: '1',
      faults: 'none',
      'time-scale': 1,
      admin: false,
      'rate-limits': true,
    };
    expect(sandboxOptionsFromArgs({ ...base, reading: 'rateLimitBody=http200' }).options.readings).toMatchObject({
      rateLimitBody: 'http200',
    });
    expect(() => sandboxOptionsFromArgs({ ...base, reading: 'refunds' })).toThrow(/name=value/);
  });
});

describe("sandbox: the emulator's own reading of the spec where the client's differs", () => {
  it('counts a keyword’s 700 characters as code points (spec: "at most 700 characters"), as the client’s schema does', async () => {
    const { call } = await harness();
    const emoji700 = '😀'.repeat(700); // 700 characters, 1400 UTF-16 units
    const r = await call('POST', `${SERP}/task_post`, { body: [serpTask(emoji700), serpTask('😀'.repeat(701))] });
    expect(r.body.tasks.map((t: Json) => t.status_code)).toEqual([20100, 40501]);
    // The client's reading (src/catalog) agrees: it sends the 700-character keyword and refuses the 701st before sending.
    expect(serpTaskSchema.safeParse(serpTask(emoji700)).success).toBe(true);
    expect(serpTaskSchema.safeParse(serpTask('😀'.repeat(701))).success).toBe(false);
  });

  it('takes an errors query whose datetime_to is later than now (the table says only "later than datetime_from")', async () => {
    const { call, nowMs } = await harness();
    const r = await call('POST', '/v3/serp/errors', {
      body: [
        { datetime_from: stamp(nowMs() - DAY), datetime_to: stamp(nowMs() + DAY) },
        { datetime_from: stamp(nowMs() - DAY), datetime_to: stamp(nowMs() - 2 * DAY) },
      ],
    });
    expect(r.body.tasks.map((t: Json) => t.status_code)).toEqual([20000, 40501]);
  });
});

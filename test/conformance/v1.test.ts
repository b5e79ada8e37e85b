/**
 * Conformance, black box: `/v1` chat completions (text and image generation) and embeddings,
 * with their Billing and Errors rows, from service-interface.md.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { charge, LIVE, SANDBOX, startEmulator, type Emulator, type Json } from './emulator.js';

let e: Emulator;
beforeAll(async () => {
  e = await startEmulator(['--time-scale', '60', '--no-rate-limits']);
});
afterAll(() => e?.stop());

const LONG = `Summarize the following notes about trail running shoes. ${'Grip, drop, stack height and weight matter on rocky ground. '.repeat(300)}`;
const chat = (model: string, key = LIVE, content = LONG) =>
  e.call('POST', '/v1/chat/completions', { key, body: { model, messages: [{ role: 'user', content }] } });
const IMAGE = 'imgmodel-3.1-flash-image';
const image = (extra: Json = {}, key = LIVE) =>
  e.call('POST', '/v1/chat/completions', {
    key,
    body: { model: IMAGE, messages: [{ role: 'user', content: 'a red bicycle against a white wall' }], stream: false, n: 1, ...extra },
  });
const embed = (body: Json, key = LIVE) => e.call('POST', '/v1/embeddings', { key, body });

/** CNY from the spec's per-1M-token prices. */
const PRICES: Record<string, [number, number]> = { terra: [0.6, 3.6], luna: [0.06, 0.36] };
const expected = (usage: Json, tier: 'terra' | 'luna') =>
  (usage.prompt_tokens * PRICES[tier]![0] + usage.completion_tokens * PRICES[tier]![1]) / 1e6;

describe('Chat completion (text)', () => {
  it('"Accepted model ids are `chat5.6-terra` and `chat5.6-luna`." "The response follows the standard chat-completion shape."', async () => {
    for (const model of ['chat5.6-terra', 'chat5.6-luna']) {
      const r = await chat(model, LIVE, 'Say hello.');
      expect(r.status, model).toBe(200);
      expect(r.body.object).toBe('chat.completion');
      const c = r.body.choices[0];
      expect(c.index).toBe(0);
      expect(c.message.role).toBe('assistant');
      expect(typeof c.message.content).toBe('string');
      expect(typeof c.finish_reason).toBe('string');
      const u = r.body.usage;
      expect(u.total_tokens).toBe(u.prompt_tokens + u.completion_tokens);
    }
  });

  it('Billing: "Chat reference prices (per 1M tokens, input/output are computed from actual input and output tokens separately)": terra 0.60/3.60, luna 0.06/0.36 CNY', async () => {
    for (const [model, tier] of [
      ['chat5.6-terra', 'terra'],
      ['chat5.6-luna', 'luna'],
    ] as const) {
      const r = await chat(model);
      expect(r.status).toBe(200);
      // the header has four decimals; how the emulator rounds is an open reading: within one unit
      expect(Math.abs(charge(r) - expected(r.body.usage, tier)), model).toBeLessThanOrEqual(0.0001 + 1e-9);
    }
  });

  it('"`chat5.4` (maps to terra) and `chat5.4-mini` (maps to luna) are legacy aliases": accepted and priced as their targets', async () => {
    for (const [model, tier] of [
      ['chat5.4', 'terra'],
      ['chat5.4-mini', 'luna'],
    ] as const) {
      const r = await chat(model);
      expect(r.status, model).toBe(200);
      expect(Math.abs(charge(r) - expected(r.body.usage, tier)), model).toBeLessThanOrEqual(0.0001 + 1e-9);
    }
  });

  it('Billing: "Sandbox keys are never charged." (chat)', async () => {
    const r = await chat('chat5.6-terra', SANDBOX);
    expect(r.status).toBe(200);
    expect(charge(r) || 0).toBe(0);
  });
});

describe('Chat completion (image generation)', () => {
  it('Response: "`object` = `chat.completion`; `model` (the upstream routing id, which differs from the public name)"; choices and usage', async () => {
    const r = await image();
    expect(r.status).toBe(200);
    expect(r.body.object).toBe('chat.completion');
    expect(typeof r.body.model).toBe('string');
    expect(r.body.model).not.toBe(IMAGE);
    const c = r.body.choices[0];
    expect(c.index).toBe(0);
    expect(typeof c.message.role).toBe('string');
    expect(typeof c.finish_reason).toBe('string');
    for (const k of ['prompt_tokens', 'completion_tokens', 'total_tokens']) expect(Number.isInteger(r.body.usage[k]), k).toBe(true);
    expect(charge(r)).toBeGreaterThan(0); // "Response headers on charged calls": X-Svc-Charge-CNY ...
    expect(r.headers.get('x-svc-request-id')).toBeTruthy(); // ... and X-Svc-Request-ID ("keep the request id")
  });

  it('"`choices[0].message.content` carries an image as a JPEG base64 data URL (`data:image/jpeg;base64,<data>`), wrapped in a markdown image expression"', async () => {
    const r = await image();
    const m = /!\[[^\]]*\]\((data:image\/jpeg;base64,([A-Za-z0-9+/=]+))\)/.exec(r.body.choices[0].message.content);
    expect(m).not.toBeNull();
    const bytes = Buffer.from(m![2]!, 'base64');
    expect([bytes[0], bytes[1], bytes[2]]).toEqual([0xff, 0xd8, 0xff]); // a JPEG
  });

  it('Errors: "image generation | `stream` true, `n` not 1, invalid size | 400"', async () => {
    expect((await image({ stream: true })).status).toBe(400);
    expect((await image({ n: 2 })).status).toBe(400);
    expect((await image({ size: 'large' })).status).toBe(400);
    expect((await image({ size: '1024' })).status).toBe(400);
  });

  it('"`size` | `<width>x<height>`; ... maximum 4K": 8192x8192 is refused, 3840x2160 accepted', async () => {
    expect((await image({ size: '8192x8192' })).status).toBe(400);
    expect((await image({ size: '3840x2160' })).status).toBe(200);
  });

  it('"`size` ... default `1024x1024`": no size is charged as 1024x1024', async () => {
    const none = await image();
    const square = await image({ size: '1024x1024' });
    expect(charge(none)).toBeGreaterThan(0);
    expect(charge(none)).toBe(charge(square));
  });

  it('"mapped by longest edge to billing tier 0.5K, 1K, 2K or 4K": dearer per tier; the longest edge decides', async () => {
    const c = async (size: string) => charge(await image({ size }));
    const [t05, t1, t2, t4] = [await c('512x512'), await c('1024x1024'), await c('2048x2048'), await c('3840x2160')];
    expect(t05).toBeLessThan(t1);
    expect(t1).toBeLessThan(t2);
    expect(t2).toBeLessThan(t4);
    expect(await c('2048x512')).toBe(t2);
    expect(await c('512x2048')).toBe(t2);
  });

  it('"Only live keys are accepted." (sandbox key: 403, per Authentication rule 2)', async () => {
    expect((await image({}, SANDBOX)).status).toBe(403);
  });
});

describe('Embeddings', () => {
  it('Response: "`object` = `list`; `model` (string ...); `data[]` with `object` (`embedding`), `index` (integer, position in input), `embedding` (number array ...)"', async () => {
    const r = await embed({ model: 'text-embedding-3-small', input: ['one shoe', 'two boots', 'three sandals'] });
    expect(r.status).toBe(200);
    expect(r.body.object).toBe('list');
    expect(typeof r.body.model).toBe('string');
    expect(r.body.data).toHaveLength(3);
    (r.body.data as Json[]).forEach((d, i) => {
      expect(d.object).toBe('embedding');
      expect(d.index).toBe(i);
      expect(Array.isArray(d.embedding)).toBe(true);
      expect(d.embedding.every((x: unknown) => typeof x === 'number')).toBe(true);
    });
  });

  it('"`usage.prompt_tokens`, `usage.total_tokens` (billing basis)"; charged on a live key', async () => {
    const r = await embed({ model: 'text-embedding-3-large', input: 'trail running shoes' });
    expect(Number.isInteger(r.body.usage.prompt_tokens)).toBe(true);
    expect(Number.isInteger(r.body.usage.total_tokens)).toBe(true);
    expect(charge(r)).toBeGreaterThan(0);
  });

  it('"`model` | yes | `text-embedding-3-small`, `text-embedding-3-large`, `text-embedding-ada-002`"', async () => {
    for (const model of ['text-embedding-3-small', 'text-embedding-3-large', 'text-embedding-ada-002']) {
      expect((await embed({ model, input: 'x' })).status, model).toBe(200);
    }
  });

  it('"`input` | string or string[] | yes | one text or an array"', async () => {
    expect((await embed({ model: 'text-embedding-3-small', input: 'one text' })).body.data).toHaveLength(1);
    expect((await embed({ model: 'text-embedding-3-small', input: ['a', 'b'] })).body.data).toHaveLength(2);
  });

  it('Errors: "embeddings | bad `model` or `input` | 400"', async () => {
    expect((await embed({ model: 'text-embedding-9', input: 'x' })).status).toBe(400);
    expect((await embed({ input: 'x' })).status).toBe(400);
    expect((await embed({ model: 'text-embedding-3-small' })).status).toBe(400);
    expect((await embed({ model: 'text-embedding-3-small', input: 42 })).status).toBe(400);
  });

  it('"`encoding_format` | `float` (default) or `base64`": "`embedding` (number array, or base64 string when requested)"', async () => {
    const f = await embed({ model: 'text-embedding-3-small', input: 'boots', encoding_format: 'float' });
    const b = await embed({ model: 'text-embedding-3-small', input: 'boots', encoding_format: 'base64' });
    expect(Array.isArray(f.body.data[0].embedding)).toBe(true);
    expect(typeof b.body.data[0].embedding).toBe('string');
    const bytes = Buffer.from(b.body.data[0].embedding, 'base64');
    expect(bytes.length).toBe(4 * f.body.data[0].embedding.length); // float32 per dimension
  });

  it('"`dimensions` | integer | no | output dimension; only `text-embedding-3-*`"', async () => {
    for (const model of ['text-embedding-3-small', 'text-embedding-3-large']) {
      const r = await embed({ model, input: 'boots', dimensions: 256 });
      expect(r.status, model).toBe(200);
      expect(r.body.data[0].embedding, model).toHaveLength(256);
    }
  });

  it('"`user` | string | no | end-user identifier": accepted', async () => {
    expect((await embed({ model: 'text-embedding-3-small', input: 'boots', user: 'analyst-7' })).status).toBe(200);
  });

  it('Billing: "Sandbox keys are never charged." (embeddings)', async () => {
    const r = await embed({ model: 'text-embedding-3-large', input: 'boots' }, SANDBOX);
    expect(r.status).toBe(200);
    expect(charge(r) || 0).toBe(0);
  });
});

describe('What the service does', () => {
  it('"Both use a widely used chat/embeddings wire format, so standard client SDKs work when the base address is changed."', async () => {
    const sdk = new OpenAI({ apiKey: LIVE, baseURL: `${e.url}/v1`, maxRetries: 0 });
    const done = await sdk.chat.completions.create({ model: 'chat5.6-luna', messages: [{ role: 'user', content: 'Say hello.' }] });
    expect(typeof done.choices[0]!.message.content).toBe('string');
    const vectors = await sdk.embeddings.create({ model: 'text-embedding-3-small', input: ['rain boots', 'trail shoes'] });
    expect(vectors.data).toHaveLength(2);
    expect(vectors.data[1]!.index).toBe(1);
  });
});

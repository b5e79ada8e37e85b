import { afterEach, describe, expect, it } from 'vitest';
import { endpoint } from '../../src/catalog/index.js';
import { decodeBase64Embedding, ServiceClient, type RawResponse } from '../../src/client/index.js';
import { EtlError } from '../../src/errors.js';
import { reply, scripted } from './client-helpers.js';

const LIVE_KEY = 'svc_live_testv1secret1';

function b64(values: number[]): string {
  const buf = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf.toString('base64');
}

const completion = (content: string, model = 'upstream-x') => ({
  id: 'c1',
  object: 'chat.completion',
  model,
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 },
});

describe('/v1 calls', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  function client(url: string, o: { key?: string; landed?: RawResponse[]; warnings?: string[] } = {}) {
    return new ServiceClient({
      baseUrl: url,
      apiKey: o.key ?? LIVE_KEY,
      land: async (raw) => void o.landed?.push(raw),
      sleep: async () => {},
      onWarning: (m) => void o.warnings?.push(m),
    });
  }

  it('chat: a legacy alias is sent as its current model with a deprecation warning, and the charge is read', async () => {
    const s = await scripted((_q, res) => reply(res, 200, completion('hello'), { 'x-svc-charge-cny': '0.000042' }));
    close = s.close;
    const warnings: string[] = [];
    const landed: RawResponse[] = [];
    const r = await client(s.url, { warnings, landed }).chat({ model: 'chat5.4-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(JSON.parse(s.seen[0]!.body).model).toBe('chat5.6-luna');
    expect(s.seen[0]!.headers['content-type']).toBe('application/json');
    expect(s.seen[0]!.headers.authorization).toBe(`Bearer ${LIVE_KEY}`);
    expect(warnings.join()).toMatch(/chat5.4-mini is a legacy alias.*chat5.6-luna/);
    expect(r.body.choices[0]!.message.content).toBe('hello');
    expect(r.charge.chargeCny).toBe('0.000042');
    expect(landed.map((l) => l.endpointId)).toEqual(['v1.chat.completions']);
  });

  it('chat: an unknown model is refused before any call', async () => {
    const s = await scripted((_q, res) => reply(res, 200, completion('x')));
    close = s.close;
    const err = await client(s.url)
      .chat({ model: 'gpt-4', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e) => e);
    expect((err as EtlError).code).toBe('ETL_REQUEST_INVALID');
    expect((err as Error).message).toMatch(/model: one of chat5.6-terra/);
    const streamed = await client(s.url)
      .chat({ model: 'chat5.6-luna', messages: [{ role: 'user', content: 'hi' }], stream: true })
      .catch((e) => e);
    expect((streamed as Error).message).toMatch(/stream: true is not supported/);
    expect(s.seen).toHaveLength(0);
  });

  it('embeddings: asks for base64 by default and decodes float32 vectors in input order', async () => {
    const a = [0.25, -1.5, 3];
    const b = [1e-3, 2, -0.125];
    const s = await scripted((_q, res) =>
      reply(res, 200, {
        object: 'list',
        model: 'text-embedding-3-small',
        data: [
          { object: 'embedding', index: 1, embedding: b64(b) },
          { object: 'embedding', index: 0, embedding: b64(a) },
        ],
        usage: { prompt_tokens: 4, total_tokens: 4 },
      }),
    );
    close = s.close;
    const r = await client(s.url).embed({ model: 'text-embedding-3-small', input: ['first', 'second'], dimensions: 3 });
    expect(JSON.parse(s.seen[0]!.body)).toMatchObject({ encoding_format: 'base64', dimensions: 3 });
    expect(r.vectors[0]).toBeInstanceOf(Float32Array);
    expect(Array.from(r.vectors[0]!)).toEqual(Array.from(Float32Array.from(a)));
    expect(Array.from(r.vectors[1]!)).toEqual(Array.from(Float32Array.from(b)));
    expect(r.usage?.total_tokens).toBe(4);
  });

  it('embeddings: float answers give the same vectors; a short vector is an error', async () => {
    const s = await scripted((_q, res, n) =>
      reply(res, 200, { object: 'list', model: 'text-embedding-3-large', data: [{ index: 0, embedding: n === 1 ? [0.5, 0.25] : [0.5] }] }),
    );
    close = s.close;
    const c = client(s.url);
    const r = await c.embed({ model: 'text-embedding-3-large', input: 'x', encoding_format: 'float', dimensions: 2 });
    expect(Array.from(r.vectors[0]!)).toEqual([0.5, 0.25]);
    const err = await c.embed({ model: 'text-embedding-3-large', input: 'x', encoding_format: 'float', dimensions: 2 }).catch((e) => e);
    expect((err as Error).message).toMatch(/1 values, 2 were asked for/);
  });

  it('embeddings: dimensions on ada-002 are refused before any call', async () => {
    const s = await scripted((_q, res) => reply(res, 200, {}));
    close = s.close;
    const err = await client(s.url)
      .embed({ model: 'text-embedding-ada-002', input: 'x', dimensions: 8 })
      .catch((e) => e);
    expect((err as Error).message).toMatch(/dimensions: only text-embedding-3-\*/);
    expect(s.seen).toHaveLength(0);
  });

  it('maps 402 and 401 to clear errors that never show the key, even when the body echoes it', async () => {
    const s = await scripted((_q, res, n) =>
      n === 1
        ? reply(res, 402, { error: { type: 'svc_error', code: 50002, message: 'insufficient balance' } })
        : reply(res, 401, { error: { message: `invalid key Bearer ${LIVE_KEY} (${LIVE_KEY})` } }),
    );
    close = s.close;
    const landed: RawResponse[] = [];
    const c = client(s.url, { landed });
    const body = { model: 'text-embedding-3-small', input: 'x' };
    const e402 = (await c.callV1(endpoint('v1.embeddings'), body).catch((e) => e)) as EtlError;
    expect(e402.code).toBe('ETL_PAYMENT_REQUIRED');
    expect(e402.message).toMatch(/svc_error 50002 insufficient balance/);
    const e401 = (await c.callV1(endpoint('v1.embeddings'), body).catch((e) => e)) as EtlError;
    expect(e401.code).toBe('ETL_AUTH');
    expect(e401.message).toMatch(/HTTP 401/);
    expect(e401.message).not.toContain('testv1secret1');
    expect(JSON.stringify(e401.context)).not.toContain('testv1secret1');
    expect(landed).toHaveLength(2);
    expect(landed[1]!.body).toContain('invalid key');
    expect(landed.map((l) => l.body).join()).not.toContain('testv1secret1');
  });

  it('image: tier computed before sending; a 502 is retried once with a new request id', async () => {
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
    const s = await scripted((_q, res, n) =>
      n === 1
        ? reply(res, 502, { error: { message: 'upstream unavailable' } })
        : reply(res, 200, completion(`![image](data:image/jpeg;base64,${jpeg.toString('base64')})`, 'upstream-img-7')),
    );
    close = s.close;
    const img = await client(s.url).generateImage({ prompt: 'a lighthouse', size: '2048x1152' });
    expect(s.seen).toHaveLength(2);
    const ids = s.seen.map((q) => q.headers['x-svc-request-id']);
    expect(ids[0]).toBeTruthy();
    expect(ids[1]).not.toBe(ids[0]);
    expect(JSON.parse(s.seen[0]!.body)).toMatchObject({ model: 'imgmodel-3.1-flash-image', n: 1, stream: false, size: '2048x1152' });
    expect(img.tier).toBe('2K');
    expect(img.jpeg.equals(jpeg)).toBe(true);
    expect(img.upstreamModel).toBe('upstream-img-7');
  });

  it('image: a dropped connection is retried once; a second failure is "outcome unknown" with both request ids', async () => {
    const s = await scripted((req) => req.socket.destroy());
    close = s.close;
    const err = (await client(s.url)
      .generateImage({ prompt: 'x' })
      .catch((e) => e)) as EtlError;
    expect(s.seen).toHaveLength(2);
    expect(err.code).toBe('ETL_OUTCOME_UNKNOWN');
    for (const q of s.seen) expect(err.message).toContain(String(q.headers['x-svc-request-id']));
  });

  it('interrupted while waiting for the rate limit: a call not sent is ETL_INTERRUPTED; an image retry after a 502 is "outcome unknown"', async () => {
    const s = await scripted((_q, res) => reply(res, 502, { error: { message: 'upstream unavailable' } }));
    close = s.close;
    const stop = new AbortController();
    // One call a minute of the chat family: the retry would wait most of a minute for its slot.
    const c = new ServiceClient({
      baseUrl: s.url,
      apiKey: LIVE_KEY,
      land: async () => {},
      sleep: async () => {},
      limits: { perMinute: { chat: 1 }, signal: stop.signal },
    });
    const image = c.generateImage({ prompt: 'x' }).catch((e: unknown) => e as EtlError);
    while (s.seen.length === 0) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 50));
    const chat = c.chat({ model: 'chat5.6-luna', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e as EtlError);
    stop.abort();
    const [imageErr, chatErr] = await Promise.all([image, chat]);
    expect(s.seen).toHaveLength(1); // neither the image's retry nor the chat call went
    // The first image attempt got a 502 and may have been charged: not "nothing was charged".
    expect(imageErr).toMatchObject({ code: 'ETL_OUTCOME_UNKNOWN' });
    expect(chatErr).toMatchObject({ code: 'ETL_INTERRUPTED' });
    expect((chatErr as EtlError).message).toContain('nothing was created or charged');
  });

  it('image: a client timeout of at least 180 s, a sandbox key and a size above 4K refused before sending', async () => {
    const s = await scripted((_q, res) => reply(res, 200, completion('x')));
    close = s.close;
    const fast = new ServiceClient({ baseUrl: s.url, apiKey: LIVE_KEY, land: async () => {}, timeoutMs: 1000, imageTimeoutMs: 5000 });
    expect(fast.timeoutFor(endpoint('v1.chat.completions.image'))).toBe(180_000);
    expect(fast.timeoutFor(endpoint('v1.chat.completions'))).toBe(1000);
    const sandbox = (await client(s.url, { key: 'svc_sandbox_abcdef' })
      .generateImage({ prompt: 'x' })
      .catch((e) => e)) as EtlError;
    expect(sandbox.code).toBe('ETL_AUTH');
    const big = (await client(s.url)
      .generateImage({ prompt: 'x', size: '4097x10' })
      .catch((e) => e)) as EtlError;
    expect(big.code).toBe('ETL_REQUEST_INVALID');
    expect(s.seen).toHaveLength(0);
  });

  it('image: 403 from the service says a live key is needed', async () => {
    const s = await scripted((_q, res) => reply(res, 403, { error: { message: 'forbidden' } }));
    close = s.close;
    const err = (await client(s.url, { key: 'svc_other_key1234' })
      .generateImage({ prompt: 'x' })
      .catch((e) => e)) as EtlError;
    expect(err.code).toBe('ETL_AUTH');
    expect(err.message).toMatch(/takes a live key/);
    expect(s.seen).toHaveLength(1);
  });

  it('decodes base64 embeddings at any buffer offset', () => {
    expect(Array.from(decodeBase64Embedding(b64([1, -2, 0.5])))).toEqual([1, -2, 0.5]);
    expect(() => decodeBase64Embedding(Buffer.from([1, 2, 3]).toString('base64'))).toThrow(/not a float32 array/);
  });
});

import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SANDBOX_KEY } from '../../src/sandbox/index.js';
import { harness, LIVE_KEY, type Json } from './sandbox-harness.js';

/** A standard client with only the base URL changed (and no retries, so every status is seen). */
const client = (url: string, key = LIVE_KEY) => new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 });

const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe('sandbox /v1 with a standard OpenAI client', () => {
  it('answers chat completions for terra and luna, maps the legacy aliases, and charges by tokens', async () => {
    const { sb } = await harness();
    const ai = client(sb.url);
    const messages = [{ role: 'user' as const, content: 'Classify the intent of the keyword "buy trail running shoes".' }];
    const terra = await ai.chat.completions.create({ model: 'chat5.6-terra', messages });
    expect(terra.model).toBe('chat5.6-terra');
    expect(terra.choices[0]!.message.content).toMatch(/trail running shoes/);
    expect(terra.usage!.total_tokens).toBe(terra.usage!.prompt_tokens + terra.usage!.completion_tokens);
    const again = await ai.chat.completions.create({ model: 'chat5.6-terra', messages });
    expect(again.choices[0]!.message.content).toBe(terra.choices[0]!.message.content);
    expect((await ai.chat.completions.create({ model: 'chat5.4', messages })).model).toBe('chat5.6-terra');
    expect((await ai.chat.completions.create({ model: 'chat5.4-mini', messages })).model).toBe('chat5.6-luna');
    const raw = await ai.chat.completions.create({ model: 'chat5.6-luna', messages }).withResponse();
    const u = raw.data.usage!;
    const expected = Math.ceil(((u.prompt_tokens * 0.06 + u.completion_tokens * 0.36) / 1e6) * 1e4 - 1e-9) / 1e4;
    expect(raw.response.headers.get('x-svc-charge-cny')).toBe(expected.toFixed(4));
    const t = terra.usage!;
    const terraLog = sb.log[0]!;
    expect(Number(terraLog.chargeCny)).toBe(Math.ceil(((t.prompt_tokens * 0.6 + t.completion_tokens * 3.6) / 1e6) * 1e4 - 1e-9) / 1e4);
    await expect(ai.chat.completions.create({ model: 'chat9', messages })).rejects.toMatchObject({ status: 400 });
  });

  it('never charges a sandbox key for chat or embeddings', async () => {
    const { sb } = await harness();
    const ai = client(sb.url, DEFAULT_SANDBOX_KEY);
    await ai.chat.completions.create({ model: 'chat5.6-terra', messages: [{ role: 'user', content: 'hello' }] });
    await ai.embeddings.create({ model: 'text-embedding-3-small', input: 'hello' });
    expect(sb.log.map((l) => l.chargeCny)).toEqual(['0.0000', '0.0000']);
  });

  it('embeds strings and arrays (base64 by default in this client), with dimensions for 3-* only', async () => {
    const { sb } = await harness();
    const ai = client(sb.url);
    const one = await ai.embeddings.create({ model: 'text-embedding-3-small', input: 'running shoes' });
    expect(one.data[0]!.embedding).toHaveLength(1536);
    const many = await ai.embeddings.create({ model: 'text-embedding-3-large', input: ['a', 'b', 'c'], dimensions: 256 });
    expect(many.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(many.data.every((d) => d.embedding.length === 256)).toBe(true);
    const norm = Math.sqrt(many.data[0]!.embedding.reduce((s, x) => s + x * x, 0));
    expect(norm).toBeCloseTo(1, 5);
    const floats = await ai.embeddings.create({ model: 'text-embedding-3-small', input: 'running shoes', encoding_format: 'float' });
    expect(floats.data[0]!.embedding[5]).toBeCloseTo(one.data[0]!.embedding[5]!, 6);
    await expect(ai.embeddings.create({ model: 'text-embedding-ada-002', input: 'x', dimensions: 256 })).rejects.toMatchObject({
      status: 400,
    });
    await expect(ai.embeddings.create({ model: 'text-embedding-4', input: 'x' })).rejects.toMatchObject({ status: 400 });
    const ada = await ai.embeddings.create({ model: 'text-embedding-ada-002', input: 'x' });
    expect(ada.data[0]!.embedding).toHaveLength(1536);
  });

  it('puts related keywords close and unrelated ones far (cosine)', async () => {
    const { sb } = await harness();
    const ai = client(sb.url);
    const words = [
      'trail running shoes',
      'best running shoes for women',
      'marathon running shoes',
      'mortgage rates today',
      'refinance mortgage rates',
      'chocolate cake recipe',
    ];
    const e = (await ai.embeddings.create({ model: 'text-embedding-3-small', input: words })).data.map((d) => d.embedding);
    const related = [cosine(e[0]!, e[1]!), cosine(e[0]!, e[2]!), cosine(e[3]!, e[4]!)];
    const unrelated = [cosine(e[0]!, e[3]!), cosine(e[1]!, e[5]!), cosine(e[4]!, e[5]!)];
    expect(Math.min(...related)).toBeGreaterThan(0.5);
    expect(Math.max(...unrelated)).toBeLessThan(0.2);
  });

  it('generates one JPEG image in a markdown data URL for a live key, priced by size tier', async () => {
    const { sb } = await harness();
    const ai = client(sb.url);
    const charges: string[] = [];
    for (const size of ['512x512', '1024x768', '2048x1024', '4096x4096']) {
      const r = await ai.chat.completions
        .create({
          model: 'imgmodel-3.1-flash-image',
          messages: [{ role: 'user', content: 'a red bicycle' }],
          n: 1,
          stream: false,
          size,
        } as Json)
        .withResponse();
      const content = r.data.choices[0]!.message.content!;
      const m = /^!\[[^\]]*\]\(data:image\/jpeg;base64,([A-Za-z0-9+/=]+)\)$/.exec(content);
      expect(m).not.toBeNull();
      expect([...Buffer.from(m![1]!, 'base64').subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
      expect(r.data.model).not.toBe('imgmodel-3.1-flash-image');
      charges.push(r.response.headers.get('x-svc-charge-cny')!);
    }
    const n = charges.map(Number);
    expect(n[0]).toBeGreaterThanOrEqual(0.018 * 8);
    expect(n[0]!).toBeLessThan(n[1]!);
    expect(n[1]!).toBeLessThan(n[2]!);
    expect(n[2]!).toBeLessThan(n[3]!);
    expect(n[3]!).toBeLessThan(0.0604 * 8 + 0.01);
  });

  it('refuses image generation with a sandbox key (403), bad n/stream/size (400) and a short balance (402)', async () => {
    const { sb } = await harness({ balanceCny: '0.1000' });
    const body = (extra: Record<string, unknown> = {}) =>
      ({ model: 'imgmodel-3.1-flash-image', messages: [{ role: 'user', content: 'a cat' }], ...extra }) as Json;
    await expect(client(sb.url, DEFAULT_SANDBOX_KEY).chat.completions.create(body())).rejects.toMatchObject({ status: 403 });
    const ai = client(sb.url);
    await expect(ai.chat.completions.create(body({ n: 2 }))).rejects.toMatchObject({ status: 400 });
    await expect(ai.chat.completions.create(body({ size: '8192x8192' }))).rejects.toMatchObject({ status: 400 });
    await expect(ai.chat.completions.create(body({ stream: true }))).rejects.toBeTruthy();
    await expect(ai.chat.completions.create(body())).rejects.toMatchObject({ status: 402 });
    expect(sb.balanceCny()).toBe('0.1000');
    await expect(ai.embeddings.create({ model: 'text-embedding-3-small', input: 'x' })).resolves.toBeTruthy();
  });

  it('answers 401 to a bad key in the standard error shape', async () => {
    const { sb } = await harness();
    // any key after the prefix is a key (issue 16), so the bad key is one without the prefix
    await expect(client(sb.url, 'svc_test_x').embeddings.create({ model: 'text-embedding-3-small', input: 'x' })).rejects.toMatchObject({
      status: 401,
    });
  });
});

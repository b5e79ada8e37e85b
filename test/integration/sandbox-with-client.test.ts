import { describe, expect, it } from 'vitest';
import { endpoint } from '../../src/catalog/index.js';
import { ServiceClient, type RawResponse } from '../../src/client/index.js';
import { harness, LIVE_KEY, T0 } from './sandbox-harness.js';

/** The project's own client against the emulator, rate limits on at 60x: the two parts agree on the wire. */
describe('sandbox with the project client', () => {
  it('posts, lists, collects, embeds, chats and generates an image, with the charges the emulator sent', async () => {
    const { sb, advance } = await harness({ rateLimits: true, timeScale: 60 });
    const landed: RawResponse[] = [];
    const client = new ServiceClient({
      baseUrl: sb.url,
      apiKey: LIVE_KEY,
      land: async (r) => void landed.push(r),
      now: () => new Date(T0),
      sleep: async () => {},
    });
    const post = await client.call(endpoint('serp.engA.organic.task_post'), {
      tasks: [{ keyword: 'trail shoes', location_code: 2840, tag: 'x1' }],
    });
    expect(post.envelope.tasks?.[0]?.status_code).toBe(20100);
    advance(300);
    const ready = await client.call(endpoint('serp.engA.organic.tasks_ready'));
    const id = post.envelope.tasks![0]!.id!;
    expect(JSON.stringify(ready.envelope)).toContain(id);
    const got = await client.call(endpoint('serp.engA.organic.task_get.advanced'), { taskId: id });
    expect(got.envelope.tasks?.[0]?.status_code).toBe(20000);
    const e = await client.embed({ model: 'text-embedding-3-small', input: ['running shoes', 'trail running shoes'] });
    expect(e.vectors.map((v) => v.length)).toEqual([1536, 1536]);
    const c = await client.chat({ model: 'chat5.6-luna', messages: [{ role: 'user', content: 'hello there' }] });
    expect(c.body.choices[0]!.message.content).toContain('hello there');
    const img = await client.generateImage({ prompt: 'a red bicycle', size: '512x512' });
    expect(img.jpeg.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    expect(img.tier).toBe('0.5K');
    const sent = sb.log.map((l) => l.chargeCny);
    expect([
      post.charge.chargeCny,
      ready.charge.chargeCny,
      got.charge.chargeCny,
      e.charge.chargeCny,
      c.charge.chargeCny,
      img.charge.chargeCny,
    ]).toEqual(sent);
  });
});

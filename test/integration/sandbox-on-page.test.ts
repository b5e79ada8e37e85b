import { describe, expect, it } from 'vitest';
import { harness, LIVE_KEY, type Json } from './sandbox-harness.js';

async function crawl(opts: { maxPages?: number } = {}) {
  const h = await harness();
  const post = await h.call('POST', '/v3/on_page/task_post', {
    key: LIVE_KEY,
    body: [{ target: 'shop.example', max_crawl_pages: opts.maxPages ?? 40 }],
  });
  expect(post.body.tasks[0].status_code).toBe(20100);
  const read = async (kind: string, q: Json = {}) =>
    await h.call('POST', `/v3/on_page/${kind}`, { key: LIVE_KEY, body: [{ id: post.body.tasks[0].id, ...q }] });
  return { ...h, id: post.body.tasks[0].id as string, read };
}

describe('sandbox: on_page crawl and reads', () => {
  it('reports the crawl in progress, growing on the clock, then finished', async () => {
    const { read, advance } = await crawl();
    advance(150);
    const mid = (await read('pages')).body.tasks[0].result[0];
    expect(mid.crawl_progress).toBe('in_progress');
    expect(mid.crawl_status.pages_crawled).toBeGreaterThan(0);
    expect(mid.crawl_status.pages_crawled).toBeLessThan(40);
    expect(mid.crawl_status.pages_in_queue).toBe(40 - mid.crawl_status.pages_crawled);
    advance(200);
    const done = (await read('pages')).body.tasks[0].result[0];
    expect(done).toMatchObject({
      crawl_progress: 'finished',
      crawl_status: { max_crawl_pages: 40, pages_crawled: 40, pages_in_queue: 0 },
      total_items_count: 40,
    });
  });

  it('filters resources with and/or/like/in, orders them, and pages with limit and offset', async () => {
    const { read, advance } = await crawl();
    advance(300);
    const all = (await read('resources', { limit: 1000 })).body.tasks[0].result[0];
    expect(all.items.length).toBe(all.total_items_count);
    expect(new Set(all.items.map((i: Json) => i.resource_type))).toEqual(new Set(['script', 'image', 'stylesheet', 'broken']));
    const images = (await read('resources', { filters: ['resource_type', '=', 'image'], limit: 1000 })).body.tasks[0].result[0].items;
    expect(images.length).toBe(all.items.filter((i: Json) => i.resource_type === 'image').length);
    const big = (
      await read('resources', {
        filters: [['resource_type', 'in', ['script', 'stylesheet']], 'and', ['size', '>', 100000]],
        order_by: ['size,desc'],
        limit: 1000,
      })
    ).body.tasks[0].result[0].items;
    expect(big.every((i: Json) => ['script', 'stylesheet'].includes(i.resource_type) && i.size > 100000)).toBe(true);
    expect(big.map((i: Json) => i.size)).toEqual([...big.map((i: Json) => i.size)].sort((a, b) => b - a));
    const either = (await read('resources', { filters: [['resource_type', '=', 'broken'], 'or', ['url', 'like', '%.css']], limit: 1000 }))
      .body.tasks[0].result[0].items;
    expect(either.length).toBe(all.items.filter((i: Json) => i.resource_type === 'broken' || i.url.endsWith('.css')).length);
    const page2 = (await read('resources', { limit: 5, offset: 5 })).body.tasks[0].result[0];
    expect(page2.items.map((i: Json) => i.url)).toEqual(all.items.slice(5, 10).map((i: Json) => i.url));
  });

  it('reads everything exactly once with search_after_token, and refuses a token for another query', async () => {
    const { read, advance } = await crawl({ maxPages: 60 });
    advance(300);
    const seen: string[] = [];
    let token: string | null = null;
    let calls = 0;
    do {
      const r: Json = (await read('links', token ? { limit: 50, search_after_token: token } : { limit: 50 })).body.tasks[0].result[0];
      seen.push(...r.items.map((i: Json) => `${i.link_from}>${i.link_to}>${i.text}`));
      token = r.search_after_token;
      calls++;
    } while (token && calls < 20);
    const total = (await read('links', { limit: 1000 })).body.tasks[0].result[0].total_items_count;
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
    expect(calls).toBe(Math.ceil(total / 50));
    const first = (await read('links', { limit: 50 })).body.tasks[0].result[0].search_after_token;
    const other = await read('links', { limit: 50, search_after_token: first, filters: ['direction', '=', 'external'] });
    expect(other.body.tasks[0].status_code).toBe(40501);
  });

  it('applies the request rules (40501) and prices: resources free, pages charged; unknown crawl 40401', async () => {
    const { read, call, advance } = await crawl();
    advance(300);
    const nine = Array.from({ length: 9 }, () => ['size', '>', 1]).flatMap((c, i) => (i ? ['and', c] : [c]));
    for (const q of [
      { limit: 1001 },
      { offset: 2_000_001 },
      { filters: nine },
      { order_by: ['a,asc', 'b,asc', 'c,asc', 'd,asc'] },
      { order_by: ['size'] },
      { filters: ['size', 'near', 1] },
    ]) {
      expect((await read('resources', q)).body.tasks[0].status_code, JSON.stringify(q)).toBe(40501);
    }
    expect((await read('resources')).headers['x-svc-charge-cny']).toBe('0.0000');
    expect(Number((await read('pages')).headers['x-svc-charge-cny'])).toBeGreaterThan(0);
    const unknown = await call('POST', '/v3/on_page/pages', { key: LIVE_KEY, body: [{ id: '11111111-2222-4333-8444-555555555555' }] });
    expect(unknown.body.tasks[0].status_code).toBe(40401);
  });
});

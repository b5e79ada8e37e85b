import { describe, expect, it } from 'vitest';
import { harness, LIVE_KEY, SERP, serpTask, type Json } from './sandbox-harness.js';
import { receiver } from './sandbox-receiver.js';

const readyIds = async (call: Awaited<ReturnType<typeof harness>>['call']) =>
  (await call('GET', `${SERP}/tasks_ready`)).body.tasks[0].result.map((t: Json) => t.id);

describe('sandbox: pingback and postback', () => {
  it('sends a pingback GET with $id and the URL-encoded $tag substituted once the task is done, and keeps it off the ready list', async () => {
    const rx = await receiver();
    const { call, advance, sb } = await harness({ admin: true });
    const post = await call('POST', `${SERP}/task_post`, {
      body: [serpTask('office plants', { tag: 'a b&c/é', pingback_url: `${rx.url}/ping?id=$id&tag=$tag` })],
    });
    const id = post.body.tasks[0].id;
    await sb.flushCallbacks();
    expect(rx.seen).toHaveLength(0); // not done yet
    advance(300);
    await sb.flushCallbacks();
    expect(rx.seen).toHaveLength(1);
    expect(rx.seen[0]!.method).toBe('GET');
    expect(rx.seen[0]!.url).toBe(`/ping?id=${id}&tag=${encodeURIComponent('a b&c/é')}`);
    expect(new URL(rx.seen[0]!.url, rx.url).searchParams.get('tag')).toBe('a b&c/é');
    expect(await readyIds(call)).toEqual([]);
    const got = await call('GET', `${SERP}/task_get/advanced/${id}`);
    expect(got.body.tasks[0].status_code).toBe(20000);
  });

  it('sends a gzip POST carrying the task_get envelope of the postback_data format', async () => {
    const rx = await receiver();
    const { call, advance, sb } = await harness();
    const post = await call('POST', `${SERP}/task_post`, {
      body: [serpTask('pizza oven', { postback_url: `${rx.url}/post/$id`, postback_data: 'regular' })],
    });
    const id = post.body.tasks[0].id;
    advance(300);
    await sb.flushCallbacks();
    const got = rx.seen[0]!;
    expect(got.method).toBe('POST');
    expect(got.url).toBe(`/post/${id}`);
    expect(got.headers['content-encoding']).toBe('gzip');
    expect(got.json.status_code).toBe(20000);
    expect(got.json.tasks[0].id).toBe(id);
    expect(got.json.tasks[0].path).toEqual(['v3', 'serp', 'engA', 'organic', 'task_get', 'regular', id]);
    const viaGet = await call('GET', `${SERP}/task_get/regular/${id}`);
    expect(got.json.tasks[0].result).toEqual(viaGet.body.tasks[0].result);
  });

  it('sends a task whose callback answers outside 200-300 to the ready list and lists it in errors', async () => {
    const rx = await receiver(() => ({ status: 500 }));
    const { call, advance, sb } = await harness();
    const post = await call('POST', `${SERP}/task_post`, {
      body: [serpTask('cactus', { tag: 't', postback_url: `${rx.url}/cb?t=$tag`, postback_data: 'advanced' })],
    });
    const id = post.body.tasks[0].id;
    advance(300);
    await sb.flushCallbacks();
    expect(await readyIds(call)).toEqual([id]);
    const errors = await call('POST', '/v3/serp/errors', { body: [{}] });
    const row = errors.body.tasks[0].result[0];
    expect(row).toMatchObject({
      id,
      function: 'postback_url',
      http_url: `${rx.url}/cb?t=t`,
      http_method: 'POST',
      http_code: 500,
      http_response: 'answered 500',
    });
    // The spec's Errors records write time with dashes: `yyyy-mm-dd hh-mm-ss +00:00`.
    expect(row.datetime).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}-\d{2}-\d{2} \+00:00$/);
    expect(errors.headers['x-svc-charge-cny']).toBe('0.0000');
  });

  it('counts an answer of exactly 300 as delivered and 301 as failed', async () => {
    let status = 300;
    const rx = await receiver(() => ({ status }));
    const { call, advance, sb } = await harness();
    const a = (await call('POST', `${SERP}/task_post`, { body: [serpTask('a', { pingback_url: `${rx.url}/$id` })] })).body.tasks[0].id;
    advance(300);
    await sb.flushCallbacks();
    status = 301;
    const b = (await call('POST', `${SERP}/task_post`, { body: [serpTask('b', { pingback_url: `${rx.url}/$id` })] })).body.tasks[0].id;
    advance(300);
    await sb.flushCallbacks();
    expect(await readyIds(call)).toEqual([b]);
    expect(a).not.toBe(b);
  });

  it('fails a callback that takes longer than 10 s divided by the time scale', async () => {
    const rx = await receiver(() => ({ status: 200, delayMs: 400 }));
    const { call, advance, sb } = await harness({ timeScale: 100 }); // 10 s → 100 ms
    const id = (await call('POST', `${SERP}/task_post`, { body: [serpTask('slow receiver', { pingback_url: `${rx.url}/$id` })] })).body
      .tasks[0].id;
    advance(3);
    await sb.flushCallbacks();
    expect(rx.seen).toHaveLength(1);
    expect(await readyIds(call)).toEqual([id]);
    const row = (await call('POST', '/v3/serp/errors', { body: [{ filtered_function: 'pingback_url' }] })).body.tasks[0].result[0];
    expect(row.http_code).toBe(0);
    expect(row.error_message).toMatch(/10 seconds/);
    expect(row.http_time).toBeGreaterThanOrEqual(0.09);
  });

  it('fails callbacks on demand (fault profile) and never calls a non-loopback address', async () => {
    const rx = await receiver();
    const { call, advance, sb } = await harness({ faults: { callbackFailure: 1 } });
    const id = (await call('POST', `${SERP}/task_post`, { body: [serpTask('x', { pingback_url: `${rx.url}/$id` })] })).body.tasks[0].id;
    const remote = await harness();
    const rid = (await remote.call('POST', `${SERP}/task_post`, { body: [serpTask('y', { pingback_url: 'http://example.com/$id' })] })).body
      .tasks[0].id;
    advance(300);
    remote.advance(300);
    await sb.flushCallbacks();
    await remote.sb.flushCallbacks();
    expect(rx.seen).toHaveLength(0);
    expect(await readyIds(call)).toEqual([id]);
    expect(await readyIds(remote.call)).toEqual([rid]);
  });
});

describe('sandbox: webhook_resend', () => {
  it('re-sends a failed callback without charge, after which the task is delivered', async () => {
    let status = 503;
    const rx = await receiver(() => ({ status }));
    const { call, advance, sb } = await harness();
    const id = (await call('POST', `${SERP}/task_post`, { key: LIVE_KEY, body: [serpTask('retry me', { pingback_url: `${rx.url}/$id` })] }))
      .body.tasks[0].id;
    advance(300);
    await sb.flushCallbacks();
    const balance = sb.balanceCny();
    status = 200;
    const resend = await call('POST', '/v3/appendix/webhook_resend', { key: LIVE_KEY, body: [{ id }] });
    expect(resend.body.tasks[0]).toMatchObject({ id, status_code: 20000, result: null });
    expect(resend.headers['x-svc-charge-cny']).toBe('0.0000');
    await sb.flushCallbacks();
    expect(rx.seen.map((r) => r.url)).toEqual([`/${id}`, `/${id}`]);
    expect(sb.balanceCny()).toBe(balance);
    expect(await readyIds((m, p, i = {}) => call(m, p, { key: LIVE_KEY, ...i }))).toEqual([]);
  });

  it('answers 40503 for a task of a function without callbacks, 40401 for an unknown id and 40006 past 100 ids', async () => {
    const { call } = await harness();
    const live = (await call('POST', `${SERP}/live/advanced`, { body: [serpTask('live one')] })).body.tasks[0].id;
    const unknown = '11111111-2222-4333-8444-555555555555';
    const many = [{ id: live }, { id: unknown }, ...Array.from({ length: 99 }, () => ({ id: unknown }))];
    const r = await call('POST', '/v3/appendix/webhook_resend', { body: many });
    const codes = r.body.tasks.map((t: Json) => t.status_code);
    expect(codes[0]).toBe(40503);
    expect(codes[1]).toBe(40401);
    expect(codes).toHaveLength(101);
    expect(codes[100]).toBe(40006);
    expect(codes.slice(1, 100).every((c: number) => c === 40401)).toBe(true);
  });
});

describe('sandbox: postback bodies built ahead (prebuildPostbacks)', () => {
  it('sends the body it would build at the send, and refunds unused depth only when the task is done', async () => {
    const sent: Array<{ result: unknown; cost: unknown; charged: string; after: string }> = [];
    for (const prebuildPostbacks of [false, true]) {
      const rx = await receiver();
      const { call, advance, sb } = await harness({ admin: true, prebuildPostbacks });
      const post = await call('POST', `${SERP}/task_post`, {
        key: LIVE_KEY,
        body: [
          serpTask('how to build a small garden shed cheaply', {
            depth: 100,
            postback_url: `${rx.url}/post/$id`,
            postback_data: 'advanced',
          }),
        ],
      });
      const id = post.body.tasks[0].id;
      const charged = sb.balanceCny();
      advance(100);
      await sb.flushCallbacks();
      expect(sb.balanceCny()).toBe(charged); // not done yet: nothing refunded
      advance(200);
      await sb.flushCallbacks();
      const stats = (await (await fetch(`${sb.url}/__admin/stats`)).json()) as { postback_bodies: unknown };
      expect(stats.postback_bodies).toEqual(prebuildPostbacks ? { prebuilt: 1, built_at_send: 0 } : { prebuilt: 0, built_at_send: 1 });
      const task = rx.seen[0]!.json.tasks[0];
      expect(task.id).toBe(id);
      sent.push({ result: task.result, cost: task.cost, charged, after: sb.balanceCny() });
    }
    expect(sent[1]).toEqual(sent[0]);
    expect(sent[0]!.after).not.toBe(sent[0]!.charged); // seven words: fewer than 100 organic results, so the unused depth is refunded
  });

  it("sends a body built ahead even when the store let its task's result go meanwhile (built again, the same)", async () => {
    const bodies: unknown[][] = [];
    for (const prebuildPostbacks of [false, true]) {
      const rx = await receiver();
      const { call, advance, sb } = await harness({ admin: true, prebuildPostbacks, resultsKept: 1, callbackConcurrency: 1 });
      const keywords = ['garden shed plans', 'cheap garden shed', 'garden shed kits'];
      await call('POST', `${SERP}/task_post`, {
        key: LIVE_KEY,
        body: keywords.map((k) => serpTask(k, { depth: 100, postback_url: `${rx.url}/post/$id`, postback_data: 'advanced' })),
      });
      // Not done yet: the bodies are built ahead in the emulator's idle turns meanwhile, one a turn.
      for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
      advance(300);
      // A call completes every task that is due (charged deeper than 10, they may be refunded), and the store
      // keeps one result: the others are let go before their postbacks go.
      await call('GET', `${SERP}/tasks_ready`);
      await sb.flushCallbacks();
      const stats = (await (await fetch(`${sb.url}/__admin/stats`)).json()) as { postback_bodies: unknown };
      expect(stats.postback_bodies).toEqual(prebuildPostbacks ? { prebuilt: 3, built_at_send: 0 } : { prebuilt: 0, built_at_send: 3 });
      const tasks = rx.seen.map((s) => s.json.tasks[0]);
      bodies.push(
        tasks
          .map((t) => ({ keyword: t.data.keyword, result: t.result, cost: t.cost }))
          .sort((a, b) => String(a.keyword).localeCompare(String(b.keyword))),
      );
    }
    expect(bodies[1]).toEqual(bodies[0]);
  });
});

import { describe, expect, it } from 'vitest';
import { fetch } from 'undici';
import { DEFAULT_SANDBOX_KEY, parseFaultProfile } from '../../src/sandbox/index.js';
import { harness, LIVE_KEY, SERP, serpTask, type Json } from './sandbox-harness.js';

describe('sandbox: per-family rate limits', () => {
  it('answers the 61st SERP call of a minute with 429 / 40202, Retry-After and no charge, and lets it through once the window slides', async () => {
    const { call, advance } = await harness({ rateLimits: true });
    for (let i = 0; i < 60; i++) expect((await call('GET', `${SERP}/tasks_ready`)).status).toBe(200);
    const refused = await call('GET', `${SERP}/tasks_ready`);
    expect(refused.status).toBe(429);
    expect(refused.body.status_code).toBe(40202);
    expect(refused.body.tasks).toEqual([]);
    expect(refused.headers['x-svc-charge-cny']).toBe('0.0000');
    expect(refused.headers['retry-after']).toBe('60');
    expect(Number(refused.headers['retry-after-ms'])).toBe(60_000);
    advance(30_000);
    expect((await call('GET', `${SERP}/tasks_ready`)).status).toBe(429);
    expect(Number((await call('GET', `${SERP}/tasks_ready`)).headers['retry-after-ms'])).toBe(30_000);
    advance(30_000);
    expect((await call('GET', `${SERP}/tasks_ready`)).status).toBe(200);
  });

  it('counts families separately and per key', async () => {
    const { call } = await harness({ rateLimits: { serp_keywords_domain: 2, appendix_status: 1 } });
    await call('GET', `${SERP}/tasks_ready`);
    await call('GET', `${SERP}/tasks_ready`);
    expect((await call('GET', `${SERP}/tasks_ready`)).status).toBe(429);
    expect((await call('GET', `${SERP}/tasks_ready`, { key: 'svc_sandbox_other1' })).status).toBe(200);
    expect((await call('GET', '/v3/appendix/status')).status).toBe(200);
    expect((await call('GET', '/v3/appendix/status')).status).toBe(429);
  });

  it('applies the spec limit of each family: 10 a minute for appendix/status and id_list, 30 for on_page', async () => {
    const { call } = await harness({ rateLimits: true });
    const count = async (method: 'GET' | 'POST', path: string, n: number, body?: unknown) => {
      let ok = 0;
      for (let i = 0; i < n; i++) if ((await call(method, path, { body })).status !== 429) ok++;
      return ok;
    };
    expect(await count('GET', '/v3/appendix/status', 12)).toBe(10);
    expect(await count('POST', '/v3/serp/id_list', 12, [{}])).toBe(10);
    expect(await count('POST', '/v3/on_page/pages', 32, [{ id: 'x' }])).toBe(30);
  });

  it('shrinks the minute by the time scale: at 60x the window is one second', async () => {
    const { call, advance } = await harness({ rateLimits: { serp_keywords_domain: 1 }, timeScale: 60 });
    expect((await call('GET', `${SERP}/tasks_ready`)).status).toBe(200);
    const refused = await call('GET', `${SERP}/tasks_ready`);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1.000');
    advance(1000);
    expect((await call('GET', `${SERP}/tasks_ready`)).status).toBe(200);
  });

  it('has no limits by default in-process', async () => {
    const { call } = await harness();
    for (let i = 0; i < 70; i++) expect((await call('GET', `${SERP}/tasks_ready`)).status).toBe(200);
  });
});

describe('sandbox: fault profile', () => {
  it('parses names, field lists and overrides, and refuses unknown names and out-of-range rates', () => {
    expect(parseFaultProfile('none').burst429).toBe(0);
    expect(parseFaultProfile('flaky').burst429).toBeGreaterThan(0);
    const custom = parseFaultProfile('burst429=0.5,burstLength=2,drop=0.1');
    expect([custom.burst429, custom.burstLength, custom.drop, custom.error5xx]).toEqual([0.5, 2, 0.1, 0]);
    expect(parseFaultProfile('chaos,slowMs=10').slowMs).toBe(10);
    expect(() => parseFaultProfile('stormy')).toThrow(/none, flaky, chaos/);
    expect(() => parseFaultProfile('drop=2')).toThrow(/between 0 and 1/);
    expect(() => parseFaultProfile('bogus=1')).toThrow(/fields are/);
  });

  it('sends 429 bursts of the configured length, uncharged, reproducibly for a seed', async () => {
    const run = async (seed: number) => {
      const { call, sb } = await harness({ seed, faults: { burst429: 0.2, burstLength: 3 } });
      const statuses: number[] = [];
      const retryAfter = new Set<string>();
      for (let i = 0; i < 40; i++) {
        const r = await call('POST', `${SERP}/task_post`, { key: LIVE_KEY, body: [serpTask(`k${i}`)] });
        statuses.push(r.status);
        if (r.status === 429) retryAfter.add(r.headers['retry-after']!);
      }
      return { statuses, sb, retryAfter };
    };
    const a = await run(7);
    const b = await run(7);
    expect(a.statuses).toEqual(b.statuses);
    const s = a.statuses.join(',');
    expect(s).toMatch(/429,429,429/);
    // every burst is a whole run of 3 (or cut by the end of the sequence)
    for (const m of s.matchAll(/(?:^|,)((?:429,?)+)/g)) {
      const len = m[1]!.split(',').filter(Boolean).length;
      if (m.index! + m[0].length < s.length) expect(len % 3).toBe(0);
    }
    expect(a.retryAfter).toEqual(new Set(['2'])); // a transient refusal: 2 s, not a spent minute
    const charged = a.sb.log.filter((l) => l.status === 429).map((l) => l.chargeCny);
    expect(new Set(charged)).toEqual(new Set(['0.0000']));
    const c = await run(8);
    expect(c.statuses).not.toEqual(a.statuses);
  });

  it('answers 5xx before processing: nothing created, nothing charged', async () => {
    const { call, sb } = await harness({ faults: { error5xx: 1 } });
    const before = sb.balanceCny();
    const r = await call('POST', `${SERP}/task_post`, { key: LIVE_KEY, body: [serpTask('a')] });
    expect([500, 502, 503]).toContain(r.status);
    expect(r.body.status_code === 50000 || r.body.status_code === 50301).toBe(true);
    expect(sb.balanceCny()).toBe(before);
  });

  it('drops the connection after processing: the POST is charged though no answer came (the case a client must not re-buy)', async () => {
    const { sb } = await harness({ faults: { drop: 1 } });
    const before = sb.balanceCny();
    await expect(
      fetch(`${sb.url}${SERP}/task_post`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${LIVE_KEY}`, 'Content-Type': 'application/json' },
        body: JSON.stringify([serpTask('dropped')]),
      }),
    ).rejects.toThrow();
    expect(sb.balanceCny()).not.toBe(before);
    expect(sb.log.at(-1)!.status).toBe(0);
    expect(sb.log.at(-1)!.chargeCny).toBe('0.0043');
  });

  it('sends a truncated JSON body with status 200 and the charge headers when malformed', async () => {
    const { call } = await harness({ faults: { malformed: 1 } });
    const r = await call('POST', `${SERP}/task_post`, { key: LIVE_KEY, body: [serpTask('broken')] });
    expect(r.status).toBe(200);
    expect(() => JSON.parse(r.text)).toThrow();
    expect(r.headers['x-svc-charge-cny']).toBe('0.0043');
  });

  it('answers slow calls only after slowMs (real time, for client timeouts)', async () => {
    const { call } = await harness({ faults: { slow: 1, slowMs: 150 } });
    const t0 = performance.now();
    const r = await call('GET', `${SERP}/tasks_ready`);
    expect(r.status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
  });

  it('fails some tasks of a batch with 40103, charges only the others, and lists the failures in errors', async () => {
    const { call } = await harness({ faults: { taskFailure: 0.5 } });
    const r = await call('POST', `${SERP}/task_post`, { key: LIVE_KEY, body: Array.from({ length: 20 }, (_, i) => serpTask(`kw ${i}`)) });
    const codes = r.body.tasks.map((t: Json) => t.status_code);
    const failed = codes.filter((c: number) => c === 40103).length;
    expect(failed).toBeGreaterThan(0);
    expect(failed).toBeLessThan(20);
    expect(codes.filter((c: number) => c !== 40103).every((c: number) => c === 20100)).toBe(true);
    expect(r.body.tasks_error).toBe(failed);
    expect(r.headers['x-svc-charge-cny']).toBe(((20 - failed) * 0.0043).toFixed(4));
    const errors = await call('POST', '/v3/serp/errors', { key: LIVE_KEY, body: [{}] });
    expect(errors.body.tasks[0].result.filter((e: Json) => e.function === 'task_post' && e.error_code === 40103)).toHaveLength(failed);
  });
});

describe('sandbox: admin view', () => {
  it('reports calls per family, tasks created per tag and CNY charged, only when enabled', async () => {
    const { call, sb } = await harness({ admin: true });
    await call('POST', `${SERP}/task_post`, {
      key: LIVE_KEY,
      body: [serpTask('a', { tag: 't1' }), serpTask('b', { tag: 't1' }), serpTask('c', { tag: 't2' })],
    });
    await call('GET', `${SERP}/tasks_ready`);
    await call('GET', '/v3/appendix/status');
    const stats = (await fetch(`${sb.url}/__admin/stats`).then((r) => r.json())) as Json;
    expect(stats.calls_by_family).toEqual({ serp_keywords_domain: 2, appendix_status: 1 });
    expect(stats.tasks_created_by_tag).toEqual({ t1: 2, t2: 1 });
    expect(stats.charged_cny).toBe('0.0129');
    const off = await harness();
    const r = await fetch(`${off.sb.url}/__admin/stats`, { headers: { Authorization: `Bearer ${DEFAULT_SANDBOX_KEY}` } });
    expect(r.status).toBe(404);
  });
});

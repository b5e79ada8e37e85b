import { afterEach, describe, expect, it } from 'vitest';
import { endpoint, formatSpecDatetime } from '../../src/catalog/index.js';
import { ServiceClient, type ClientOptions, type RawResponse } from '../../src/client/index.js';
import { EtlError } from '../../src/errors.js';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.js';

const LIVE = 'svc_live_testclienttests';
const task = (keyword: string, tag?: string) => ({ keyword, location_code: 2840, language_code: 'en', ...(tag ? { tag } : {}) });

describe('client against the emulator, with its faults and time scale', () => {
  let sb: SandboxHandle | undefined;
  afterEach(async () => {
    await sb?.close();
    sb = undefined;
  });

  async function setup(o: SandboxOptions, c: Partial<ClientOptions> = {}) {
    sb = await startSandbox({ seed: 5, ...o });
    const landed: RawResponse[] = [];
    const client = new ServiceClient({
      baseUrl: sb.url,
      apiKey: LIVE,
      land: async (r) => void landed.push(r),
      backoffMs: 20,
      maxBackoffMs: 200,
      ...c,
    });
    return { sb, client, landed };
  }

  it("stays inside the emulator's sliding window (time scale 60: a minute lasts a second) with no 429", async () => {
    const { sb, client } = await setup(
      { timeScale: 60, rateLimits: { serp_keywords_domain: 10 } },
      { limits: { windowMs: 1000, perMinute: { serp_keywords_domain: 10 } } },
    );
    const ready = endpoint('serp.engA.organic.tasks_ready');
    const results = await Promise.all(Array.from({ length: 25 }, () => client.call(ready)));
    expect(results.every((r) => r.outcome.ok)).toBe(true);
    expect(sb.log.filter((l) => l.status === 429)).toHaveLength(0);
    expect(sb.log).toHaveLength(25);
  });

  it('rides out 429 bursts: every task_post lands once, each task charged once', async () => {
    // Time scale 600: the emulator's minute (and so its Retry-After) lasts 0.1 s.
    const { sb, client } = await setup({ faults: { burst429: 0.4, burstLength: 2 }, timeScale: 600 }, { maxAttempts: 15 });
    const post = endpoint('serp.engA.organic.task_post');
    const before = Number(sb.balanceCny());
    for (let i = 0; i < 6; i++) {
      const r = await client.call(post, { tasks: [task(`kw ${i}`, `t${i}`)] });
      expect(r.outcome.ok).toBe(true);
    }
    const posts = sb.log.filter((l) => l.path.endsWith('/task_post'));
    expect(posts.filter((l) => l.status === 429).length).toBeGreaterThan(0);
    expect(posts.filter((l) => l.status === 200)).toHaveLength(6);
    const charged = posts.reduce((s, l) => s + Number(l.chargeCny), 0);
    expect(before - Number(sb.balanceCny())).toBeCloseTo(charged, 4);
  });

  it('retries a free read through 5xx faults, and never re-sends a charged POST after one', async () => {
    const { sb, client } = await setup({ faults: { error5xx: 1 } }, { maxAttempts: 3 });
    const read = (await client.call(endpoint('serp.engA.organic.tasks_ready')).catch((e) => e)) as EtlError;
    expect(read.code).toBe('ETL_SERVICE_UNAVAILABLE');
    expect(sb.log).toHaveLength(3);
    const post = (await client
      .call(endpoint('serp.engA.organic.task_post'), { tasks: [task('x', 'only-once')] })
      .catch((e) => e)) as EtlError;
    expect(post.code).toBe('ETL_OUTCOME_UNKNOWN');
    expect(post.context.tags).toEqual(['only-once']);
    expect(sb.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(1);
  });

  it('a dropped charged POST is reported unknown with its tag and sent once, though the emulator charged it', async () => {
    const { sb, client } = await setup({ faults: { drop: 1 } });
    const before = Number(sb.balanceCny());
    const err = (await client
      .call(endpoint('serp.engA.organic.task_post'), { tasks: [task('dropped', 'tag-dropped')] })
      .catch((e) => e)) as EtlError;
    expect(err.code).toBe('ETL_OUTCOME_UNKNOWN');
    expect(err.context.tags).toEqual(['tag-dropped']);
    expect(sb.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(1);
    expect(Number(sb.balanceCny())).toBeLessThan(before);
  });

  it('finds a task of an unknown outcome by tag with id_list (include_metadata)', async () => {
    const { client } = await setup({});
    await client.call(endpoint('serp.engA.organic.task_post'), { tasks: [task('known', 'tag-known'), task('other', 'tag-other')] });
    // The window's end is a whole second the service's clock has passed, as the run takes it (find-by-tag):
    // the test's own clock read to the second can be ahead of the service's by up to a second ("not after now").
    const now = await client.serverSecondAfter(new Date(), (ms) => new Promise((r) => setTimeout(r, ms)));
    const r = await client.call(endpoint('serp.id_list'), {
      tasks: [
        {
          datetime_from: formatSpecDatetime(new Date(now.getTime() - 3_600_000)),
          datetime_to: formatSpecDatetime(now),
          include_metadata: true,
        },
      ],
    });
    const rows = (r.envelope.tasks?.[0]?.result ?? []) as Array<{ id: string; metadata?: { tag?: string } }>;
    expect(rows.map((x) => x.metadata?.tag).sort()).toEqual(['tag-known', 'tag-other']);
  });

  it('returns per-task outcomes when some tasks of a batch fail', async () => {
    const { client } = await setup({ faults: { taskFailure: 0.5 } });
    const r = await client.call(endpoint('serp.engA.organic.task_post'), {
      tasks: Array.from({ length: 12 }, (_, i) => task(`k${i}`, `b${i}`)),
    });
    expect(r.outcome.tasks).toHaveLength(12);
    expect(r.outcome.failedTasks).toBeGreaterThan(0);
    expect(r.outcome.failedTasks).toBeLessThan(12);
    expect(r.outcome.ok).toBe(false);
    for (const t of r.outcome.tasks) expect([20100, 40103, 50000]).toContain(t.statusCode);
  });

  it('a malformed body is a clear error and the raw body is kept', async () => {
    const { client, landed } = await setup({ faults: { malformed: 1 } });
    const err = (await client.call(endpoint('serp.engA.organic.live.advanced'), { tasks: [task('m')] }).catch((e) => e)) as EtlError;
    expect(err.code).toBe('ETL_SERVICE_ERROR');
    expect(err.message).toMatch(/not a service envelope; the body was landed raw/);
    expect(landed).toHaveLength(1);
    expect(() => JSON.parse(landed[0]!.body)).toThrow();
    expect(landed[0]!.body.length).toBeGreaterThan(0);
  });

  it('a charged live call answered too slowly is sent once and reported unknown', async () => {
    const { sb, client } = await setup({ faults: { slow: 1, slowMs: 3000 } }, { timeoutMs: 500 });
    const err = (await client
      .call(endpoint('serp.engA.organic.live.regular'), { tasks: [task('slow', 'tag-slow')] })
      .catch((e) => e)) as EtlError;
    expect(err.code).toBe('ETL_OUTCOME_UNKNOWN');
    expect(err.context.tags).toEqual(['tag-slow']);
    await new Promise((r) => setTimeout(r, 3200)); // let the slow answer be written (and logged)
    expect(sb.log.filter((l) => l.path.includes('/live/'))).toHaveLength(1);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient, type RawResponse } from '../../src/client/index.js';
import { parsePipeline } from '../../src/config/index.js';
import { EtlError } from '../../src/errors.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, sumDecimals, tempDir } from './helpers.js';

const KEY = 'svc_live_testretries';

function serpPipeline(keywords: string[], extra = ''): ReturnType<typeof parsePipeline> {
  return parsePipeline(
    `name: retries\n${extra}jobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [${keywords.join(', ')}]\n`,
    'retries.yaml',
    {},
  );
}

/** What the emulator says it created per tag and which faults it injected (the admin view). */
async function stats(
  sb: SandboxHandle,
): Promise<{ tasks_created_by_tag: Record<string, number>; faults_injected: Record<string, number> }> {
  const res = await fetch(`${sb.url}/__admin/stats`);
  return (await res.json()) as never;
}

describe('retries as the spec says, never buying twice (issue 16, points 6 and 7)', () => {
  let sandbox: SandboxHandle | undefined;
  let tmp: { dir: string; cleanup: () => Promise<void> } | undefined;
  afterEach(async () => {
    await sandbox?.close();
    await tmp?.cleanup();
    sandbox = undefined;
    tmp = undefined;
  });

  async function run(opts: SandboxOptions, keywords: string[], extra = '') {
    sandbox = await startSandbox({ readyAfterMs: 0, admin: true, ...opts });
    tmp = await tempDir('pipeline-retry-');
    const summary = await runPipeline({
      pipeline: serpPipeline(keywords, extra),
      file: 'retries.yaml',
      warehouseDir: tmp.dir,
      baseUrl: sandbox.url,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 5,
      limits: { windowMs: 1000 },
      models: false,
    });
    return { summary, sb: sandbox, dir: tmp.dir };
  }

  it('a task_post processed and then answered 500 is found by tag, never posted again, and collected', async () => {
    const { summary, sb } = await run({ faults: { error5xxAfter: 1 }, faultPaths: /\/task_post$/ }, ['alpha', 'beta', 'gamma']);
    const s = await stats(sb);
    expect(s.faults_injected.http500_after).toBe(1);
    expect(Object.values(s.tasks_created_by_tag)).toEqual([1, 1, 1]); // each bought once
    expect(sb.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(1);
    expect(sb.log.filter((l) => l.path.endsWith('/id_list')).length).toBeGreaterThanOrEqual(1);
    expect(summary.state).toBe('completed');
    expect(summary.tasks.collected).toBe(3);
    // The 500's charge is in the ledger: nothing was lost from the money either.
    expect(summary.chargedCny).toBe(sumDecimals(sb.log.map((l) => l.chargeCny)));
    expect(Number(summary.chargedCny)).toBeGreaterThan(0);
  });

  it('a task_post refused with 5xx before processing is looked up, then posted again; each task bought once', async () => {
    // Seeded: the first two POSTs fail, the third passes (the same seed gives the same faults).
    const { summary, sb } = await run({ faults: { error5xx: 0.5 }, faultPaths: /\/task_post$/, seed: 6 }, ['alpha', 'beta', 'gamma']);
    const s = await stats(sb);
    const posts = sb.log.filter((l) => l.path.endsWith('/task_post'));
    expect(posts.map((p) => p.status >= 500)).toEqual([true, true, false]);
    // Every re-post came after a look-up by tag.
    const order = sb.log
      .filter((l) => /\/(task_post|id_list)$/.test(l.path))
      .map((l) => (l.path.endsWith('id_list') ? 'look' : l.status === 200 ? 'ok' : 'fail'));
    for (let i = 0; i + 1 < order.length; i++) if (order[i] === 'fail') expect(order[i + 1]).toBe('look');
    expect(Object.values(s.tasks_created_by_tag)).toEqual([1, 1, 1]);
    expect(summary.state).toBe('completed');
    expect(summary.tasks.collected).toBe(3);
  });

  it('gives up after a bounded number of looks when every POST fails, buying nothing and leaving the tasks to look up', async () => {
    const { summary, sb, dir } = await run({ faults: { error5xx: 1 }, faultPaths: /\/task_post$/ }, ['alpha', 'beta']);
    const posts = sb.log.filter((l) => l.path.endsWith('/task_post'));
    const looks = sb.log.filter((l) => l.path.endsWith('/id_list'));
    expect(posts).toHaveLength(4); // the first POST and three re-posts, each after a look
    expect(looks).toHaveLength(3);
    expect(summary.state).toBe('partial');
    expect(summary.stopKind).toBe('unknown');
    expect(sb.balanceCny()).toBe('1000.0000');
    await withWarehouse(dir, async (wh) => {
      const states = await wh.all<{ state: string }>(`SELECT state FROM tasks ORDER BY tag`);
      expect(states.map((r) => r.state)).toEqual(['unknown', 'unknown']);
    });
  });

  it('a top-level 40202 inside an HTTP 200 is a rate limit: waited out and sent again, nothing lost or bought twice', async () => {
    const { summary, sb } = await run({ faults: { rateLimit200: 0.5 }, faultPaths: /\/(task_post|tasks_ready)$/, seed: 5 }, [
      'alpha',
      'beta',
      'gamma',
    ]);
    const s = await stats(sb);
    expect(s.faults_injected.rate_limited_200).toBeGreaterThan(0);
    expect(Object.values(s.tasks_created_by_tag)).toEqual([1, 1, 1]);
    expect(summary.state).toBe('completed');
    expect(summary.tasks.collected).toBe(3);
  });

  it('40006: re-posts the refused tasks in smaller POSTs and keeps the size for the rest of the run', async () => {
    const keywords = Array.from({ length: 150 }, (_, i) => `kw${i}`);
    // A budget posts one batch at a time, so the second batch starts after the first learnt the size.
    const { summary, sb, dir } = await run({ maxTasksPerPost: 40 }, keywords, 'budget_cny: 100\n');
    expect(summary.state).toBe('completed');
    expect(summary.tasks.collected).toBe(150);
    expect(summary.tasks.failed).toBe(0);
    const s = await stats(sb);
    expect(Object.keys(s.tasks_created_by_tag)).toHaveLength(150);
    expect(Object.values(s.tasks_created_by_tag).every((n) => n === 1)).toBe(true);
    await withWarehouse(dir, async (wh) => {
      const posts = await wh.all<{ tasks: number }>(`SELECT tasks FROM ledger WHERE path LIKE '%/task_post' ORDER BY called_at`);
      // Nothing prices the endpoint yet: one task alone first. Then the 99 others (40 pass, 59
      // refused), then 40 and 19; the second batch of 50 goes as 40 and 10 at once.
      expect(posts.map((p) => p.tasks)).toEqual([1, 99, 40, 19, 40, 10]);
      const [refused] = await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM tasks WHERE status_code = 40006`);
      expect(refused!.n).toBe(0);
    });
  });
});

describe('image generation waits and retries once with a new request id, never more (issue 16, point 6)', () => {
  let sandbox: SandboxHandle | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  function client(url: string, landed: RawResponse[]) {
    return new ServiceClient({ baseUrl: url, apiKey: KEY, land: async (raw) => void landed.push(raw), sleep: async () => {} });
  }

  it('a 429 is retried once, and a second 429 is not retried', async () => {
    sandbox = await startSandbox({ faults: { burst429: 1, burstLength: 10 }, faultPaths: /^\/v1\/chat/ });
    const landed: RawResponse[] = [];
    const err = await client(sandbox.url, landed)
      .generateImage({ prompt: 'a lighthouse' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EtlError);
    expect((err as EtlError).code).toBe('ETL_RATE_LIMITED');
    expect(sandbox.log.map((l) => l.status)).toEqual([429, 429]);
    expect(new Set(landed.map((l) => l.callId)).size).toBe(2);
  });

  it('a single 429 is waited out and the image is asked for once more, with a new request id', async () => {
    // Seeded: the first call draws a 429, the second none.
    sandbox = await startSandbox({ faults: { burst429: 0.5, burstLength: 1 }, faultPaths: /^\/v1\/chat/, seed: 8 });
    const landed: RawResponse[] = [];
    const img = await client(sandbox.url, landed).generateImage({ prompt: 'a lighthouse' });
    expect(img.jpeg.length).toBeGreaterThan(0);
    expect(sandbox.log.map((l) => l.status)).toEqual([429, 200]);
    expect(landed[0]!.callId).not.toBe(landed[1]!.callId);
  });

  it('two 5xx answers end with outcome unknown after exactly two requests', async () => {
    sandbox = await startSandbox({ faults: { error5xx: 1 }, faultPaths: /^\/v1\/chat/ });
    const err = await client(sandbox.url, [])
      .generateImage({ prompt: 'a lighthouse' })
      .catch((e: unknown) => e);
    expect((err as EtlError).code).toBe('ETL_OUTCOME_UNKNOWN');
    expect(sandbox.log).toHaveLength(2);
  });
});

import { performance } from 'node:perf_hooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline, type RunOptions } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, sumDecimals, tempDir, warmReferenceLists } from './helpers.js';

const KEYWORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'];
const pipelineOf = (mode: 'live' | 'task') =>
  parsePipeline(
    `name: interrupt-${mode}\njobs:\n  - kind: serp\n${mode === 'live' ? '    mode: live\n' : ''}    depth: 10\n    locations: [2840]\n    keywords: [${KEYWORDS.join(', ')}]\n`,
    `interrupt-${mode}.yaml`,
    {},
  );

/** Resolves once `ok()` holds, checking every 20 ms. */
async function until(ok: () => boolean): Promise<void> {
  while (!ok()) await new Promise((r) => setTimeout(r, 20));
}

/**
 * Ctrl-C while calls wait for the rate limit: the service's real minute, with a limit small
 * enough that the run must wait most of a minute for its next slot. The run stops at once
 * (not a minute later), sends nothing more, leaves nothing half-recorded, and the next run
 * finishes the job without buying anything twice.
 */
describe('an interrupted run does not wait out the rate limit', () => {
  let sandbox: SandboxHandle;
  let wh: { dir: string; cleanup: () => Promise<void> };
  beforeEach(async () => {
    wh = await tempDir('pipeline-interrupt-');
    sandbox = await startSandbox({ readyAfterMs: 0 });
  });
  afterEach(async () => {
    await sandbox.close();
    await wh.cleanup();
  });

  const options = (mode: 'live' | 'task', extra: Partial<RunOptions>): RunOptions => ({
    pipeline: pipelineOf(mode),
    file: `interrupt-${mode}.yaml`,
    warehouseDir: wh.dir,
    baseUrl: sandbox.url,
    apiKey: 'svc_live_testinterrupt',
    logger: silentLogger,
    pollIntervalMs: 1,
    collectTimeoutMs: 30_000,
    models: false,
    ...extra,
  });

  const ledger = () =>
    withWarehouse(wh.dir, (db) =>
      db.all<{ call_id: string; status: number | null; charge: string | null }>(
        `SELECT call_id, http_status AS status, charge_cny::VARCHAR AS charge FROM ledger ORDER BY called_at`,
      ),
    );
  const tasks = () =>
    withWarehouse(wh.dir, (db) =>
      db.all<{ state: string; n: number }>(`SELECT state, count(*)::INT AS n FROM tasks GROUP BY state ORDER BY state`),
    );
  /** The emulator's charges, for finance's check: the ledger must hold each one, once. */
  const charged = () => sumDecimals(sandbox.log.map((l) => l.chargeCny));

  it('live calls: those still waiting are not sent, and the next run sends them once', async () => {
    await warmReferenceLists(wh.dir, pipelineOf('live'), 'interrupt-live.yaml', () => new Date());
    const stop = new AbortController();
    const livePosts = () => sandbox.log.filter((l) => l.path.includes('/live/'));
    // Three live calls a minute: the fourth would wait most of a minute for its slot.
    const run = runPipeline(options('live', { signal: stop.signal, limits: { perMinute: { serp_keywords_domain: 3 } } }));
    await until(() => livePosts().length >= 3);
    await new Promise((r) => setTimeout(r, 200)); // the next calls are now waiting for a slot
    const t0 = performance.now();
    stop.abort();
    const first = await run;
    const waited = performance.now() - t0;
    expect(first.state).toBe('partial');
    expect(first.stopKind).toBe('interrupted');
    // Stopped with the window still closed: a wait for the next slot would have taken most of a minute.
    expect(waited).toBeLessThan(20_000);
    expect(livePosts()).toHaveLength(3);
    // The three answered calls are in the ledger with their charges; no row is left for a call never sent.
    const rows = await ledger();
    expect(rows.filter((r) => r.status === null)).toEqual([]);
    expect(sumDecimals(rows.map((r) => r.charge ?? '0'))).toBe(charged());
    // The calls of the group that was waiting are recorded unsent (the next run sends them); later ones were never planned.
    const states = await tasks();
    expect(states.map((s) => s.state)).toEqual(['collected', 'unsent']);
    expect(states[0]!.n).toBe(3);

    const second = await runPipeline(options('live', { limits: { windowMs: 50 } }));
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(livePosts()).toHaveLength(KEYWORDS.length); // each keyword bought once
    expect(await tasks()).toEqual([{ state: 'collected', n: KEYWORDS.length }]);
    expect(sumDecimals((await ledger()).map((r) => r.charge ?? '0'))).toBe(charged());
  });

  it('embeddings: a call still waiting is not sent, those made are kept, and the next run makes the rest without buying one twice', async () => {
    const yaml = `name: interrupt-embed\njobs:\n  - kind: serp\n    depth: 10\n    locations: [2840]\n    keywords: [${KEYWORDS.join(', ')}]\n  - kind: embeddings\n    name: vectors\n    batch_size: 2\n`;
    const pipeline = parsePipeline(yaml, 'interrupt-embed.yaml', {});
    await warmReferenceLists(wh.dir, pipeline, 'interrupt-embed.yaml', () => new Date());
    const stop = new AbortController();
    const embeds = () => sandbox.log.filter((l) => l.path === '/v1/embeddings');
    // Two embeddings calls a minute (2 keywords each): the third waits most of a minute.
    const run = runPipeline({
      ...options('task', { signal: stop.signal, limits: { perMinute: { v1_other: 2 } } }),
      pipeline,
      file: 'interrupt-embed.yaml',
    });
    await until(() => embeds().length >= 2);
    await new Promise((r) => setTimeout(r, 200));
    const t0 = performance.now();
    stop.abort();
    const first = await run;
    expect(performance.now() - t0).toBeLessThan(20_000);
    expect(first.state).toBe('partial'); // not failed: the run is resumable
    expect(first.stopKind).toBe('interrupted');
    expect(first.clusters).toBeUndefined(); // no label call after Ctrl-C
    expect(embeds()).toHaveLength(2);
    const cached = () => withWarehouse(wh.dir, (db) => db.all<{ n: number }>(`SELECT count(*)::INT AS n FROM keyword_embeddings`));
    expect(await cached()).toEqual([{ n: 4 }]);

    const second = await runPipeline({ ...options('task', { limits: { windowMs: 50 } }), pipeline, file: 'interrupt-embed.yaml' });
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(embeds()).toHaveLength(KEYWORDS.length / 2); // each keyword embedded once
    expect(await cached()).toEqual([{ n: KEYWORDS.length }]);
    expect(sumDecimals((await ledger()).map((r) => r.charge ?? '0'))).toBe(charged());
  });

  it('collection: task_get calls still waiting are not sent, and the next run collects the rest without posting again', async () => {
    await warmReferenceLists(wh.dir, pipelineOf('task'), 'interrupt-task.yaml', () => new Date());
    const stop = new AbortController();
    const gets = () => sandbox.log.filter((l) => l.path.includes('/task_get/'));
    // One POST, the ready list and two task_gets fill the family's minute: the third task_get waits.
    const run = runPipeline(options('task', { signal: stop.signal, limits: { perMinute: { serp_keywords_domain: 4 } } }));
    await until(() => gets().length >= 1);
    await new Promise((r) => setTimeout(r, 300));
    const before = sandbox.log.length;
    const t0 = performance.now();
    stop.abort();
    const first = await run;
    expect(first.stopKind).toBe('interrupted');
    expect(performance.now() - t0).toBeLessThan(20_000);
    expect(sandbox.log.length).toBe(before); // nothing sent after the interrupt
    const fetched = gets().length;
    expect(fetched).toBeLessThan(KEYWORDS.length);
    expect(await tasks()).toEqual([
      { state: 'collected', n: fetched },
      { state: 'posted', n: KEYWORDS.length - fetched },
    ]);

    const second = await runPipeline(options('task', { limits: { windowMs: 50 } }));
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(sandbox.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(1);
    expect(await tasks()).toEqual([{ state: 'collected', n: KEYWORDS.length }]);
    expect(sumDecimals((await ledger()).map((r) => r.charge ?? '0'))).toBe(charged());
  });
});

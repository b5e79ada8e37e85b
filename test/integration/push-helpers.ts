import { afterEach } from 'vitest';
import { parsePipeline, type Pipeline } from '../../src/config/index.js';
import { runPipeline, type RunOptions, type RunSummary } from '../../src/run/index.js';
import { startSandbox, type AdminStatsBody, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.js';
import { withWarehouse, type Warehouse } from '../../src/warehouse/index.js';
import { movingClock, silentLogger, tempDir } from './helpers.js';

export const KEY = 'svc_live_testpushtest';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

/** A SERP pipeline of `n` keywords with a `collection` block (YAML lines, indented by two). */
export function pushPipeline(n: number, collection: string[] = ['mode: push', 'listen: "127.0.0.1:0"']): Pipeline {
  const keywords = Array.from({ length: n }, (_, i) => `push keyword ${i}`);
  const text = `name: push-test\ncollection:\n${collection.map((l) => `  ${l}`).join('\n')}\njobs:\n  - kind: serp\n    depth: 10\n    locations: [2840]\n    keywords: [${keywords.map((k) => JSON.stringify(k)).join(', ')}]\n`;
  return parsePipeline(text, 'push-test.yaml', {});
}

/** An emulator with its admin view, a warehouse folder and a run helper, all closed after the test. */
export async function pushWorld(sandboxOpts: SandboxOptions = {}, now: () => Date = movingClock('2026-11-20T09:00:00Z')) {
  const sb: SandboxHandle = await startSandbox({ admin: true, readyAfterMs: 50, now, ...sandboxOpts });
  const wh = await tempDir('pipeline-push-');
  cleanups.push(async () => {
    await sb.close();
    await wh.cleanup();
  });
  const notes: string[] = [];
  return {
    sb,
    dir: wh.dir,
    now,
    notes,
    run: (pipeline: Pipeline, extra: Partial<RunOptions> = {}): Promise<RunSummary> =>
      runPipeline({
        pipeline,
        file: 'push-test.yaml',
        warehouseDir: wh.dir,
        baseUrl: sb.url,
        apiKey: KEY,
        logger: silentLogger,
        pollIntervalMs: 50,
        collectTimeoutMs: 60_000,
        limits: { windowMs: 1_000 },
        now,
        onProgress: (e) => {
          if (e.kind === 'note') notes.push(e.text);
        },
        ...extra,
      }),
    stats: async (): Promise<AdminStatsBody> => (await fetch(`${sb.url}/__admin/stats`)).json() as Promise<AdminStatsBody>,
    /** Calls the emulator answered whose path contains `part`. */
    calls: (part: string) => sb.log.filter((l) => l.path.includes(part)).length,
    db: <T>(fn: (wh: Warehouse) => Promise<T>) => withWarehouse(wh.dir, fn),
  };
}

/** Every task collected, each with exactly one SERP result row (so loaded once), and each bought once. */
export async function expectEachCollectedOnce(
  w: Awaited<ReturnType<typeof pushWorld>>,
  n: number,
  expect: (v: unknown) => any,
): Promise<void> {
  const stats = await w.stats();
  const created = Object.values(stats.tasks_created_by_tag);
  expect(created).toHaveLength(n);
  expect(created.every((c) => c === 1)).toBe(true);
  await w.db(async (wh) => {
    const [t] = await wh.all<{ collected: number; tasks: number }>(
      `SELECT count(*) FILTER (WHERE state = 'collected')::INT AS collected, count(*)::INT AS tasks FROM tasks`,
    );
    expect(t).toEqual({ collected: n, tasks: n });
    const [r] = await wh.all<{ rows: number; ids: number }>(
      `SELECT count(*)::INT AS rows, count(DISTINCT task_id)::INT AS ids FROM serp_results`,
    );
    expect(r).toEqual({ rows: n, ids: n });
  });
}

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadPipeline, type LoadedPipeline } from '../../src/config/index.js';
import { runPipeline, type RunSummary } from '../../src/run/index.js';
import { startSandbox, type RankProfile } from '../../src/sandbox/index.js';
import { withWarehouse, type Warehouse } from '../../src/warehouse/index.js';
import { movingClock, silentLogger } from './helpers.js';

/** Rank profiles that hold a domain in one band on every series: 1-10, 31-100, or beyond 100. */
export const TOP10: RankProfile = { top10: 1, top11to30: 0, beyond100: 0 };
export const MID: RankProfile = { top10: 0, top11to30: 0, beyond100: 0 };
export const GONE: RankProfile = { top10: 0, top11to30: 0, beyond100: 1 };

/** Writes a pipeline file into `dir` and loads it. */
export async function pipelineFile(dir: string, yaml: string, name = 'auto.yaml'): Promise<LoadedPipeline> {
  const file = join(dir, name);
  await writeFile(file, yaml);
  return loadPipeline(file);
}

/** One run of an auto-depth pipeline against a running emulator at `baseUrl`, on the clock `now`. */
export function autoRun(pipeline: LoadedPipeline, warehouseDir: string, baseUrl: string, now: () => Date): Promise<RunSummary> {
  return runPipeline({
    pipeline,
    file: pipeline.file,
    warehouseDir,
    baseUrl,
    apiKey: 'svc_live_testautodepth',
    logger: silentLogger,
    pollIntervalMs: 50,
    collectTimeoutMs: 30_000,
    now,
    alerts: false,
  });
}

/** One night of a pipeline against an emulator on `date` (03:00 UTC) with the given rank profiles. */
export async function autoNight(
  pipeline: LoadedPipeline,
  warehouseDir: string,
  date: string,
  rankProfiles: Record<string, RankProfile>,
): Promise<RunSummary> {
  const now = movingClock(`${date}T03:00:00Z`);
  const sandbox = await startSandbox({ seed: 7, now, readyAfterMs: 20, rankProfiles });
  try {
    return await autoRun(pipeline, warehouseDir, sandbox.url, now);
  } finally {
    await sandbox.close();
  }
}

/** A run's SERP tasks: keyword, depth bought and why. */
export function tasksOf(wh: Warehouse, runId: string): Promise<{ keyword: string; depth: number; reason: string | null; state: string }[]> {
  return wh.all(
    `select spec ->> 'keyword' as keyword, (spec ->> 'depth')::int as depth, s.depth_reason as reason, s.state
     from stg_pipeline__tasks as s join tasks as t using (tag, run_id) where run_id = $1 order by keyword, depth`,
    [runId],
  );
}

/** A tracked domain's rank_history row on a day (undefined: no row). */
export async function rankOn(
  dir: string,
  keyword: string,
  domain: string,
  day: string,
): Promise<{ rank: number | null; checked_depth: number; is_lost: boolean; is_new: boolean } | undefined> {
  const rows = await withWarehouse(dir, (wh) =>
    wh.all<{ rank: number | null; checked_depth: number; is_lost: boolean; is_new: boolean }>(
      `select rank_absolute as rank, checked_depth, is_lost, is_new from rank_history
       where keyword = $1 and domain = $2 and check_date = $3::date`,
      [keyword, domain, day],
    ),
  );
  return rows[0];
}

/** The depth the series' check of a day looked (the check that rank_history keeps). */
export async function checkedDepth(dir: string, keyword: string, day: string): Promise<number | undefined> {
  const rows = await withWarehouse(dir, (wh) =>
    wh.all<{ depth: number }>(`select depth from int_serp__daily_checks where keyword = $1 and check_date = $2::date`, [keyword, day]),
  );
  return rows[0]?.depth;
}

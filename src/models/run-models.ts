import { fileURLToPath } from 'node:url';
import { withWarehouse, type Warehouse } from '../warehouse/index.js';
import type { Model } from './model.js';
import { buildModels, type ModelBuildResult } from './build-models.js';
import { discoverModels } from './discover-models.js';
import { withUpstream } from './order-models.js';
import { nightScopes, testModels, type ModelTestResult } from './test-models.js';

/** The `sql/` folder shipped with the tool, so `pipeline models` works from any directory. */
export const DEFAULT_SQL_DIR = fileURLToPath(new URL('../../sql', import.meta.url));

export interface RunModelsOptions {
  warehouseDir: string;
  sqlDir?: string;
  /** Build these models and what they read; default all. */
  select?: readonly string[];
  fullRefresh?: boolean;
  /** Run the sidecar tests of the built models afterwards. */
  test?: boolean;
  onModel?: (r: ModelBuildResult) => void;
}

export interface RunModelsResult {
  builds: ModelBuildResult[];
  tests: ModelTestResult[];
  /** True when no model failed and no test failed or errored (a warned test is not a failure). */
  ok: boolean;
}

/**
 * Discovers, builds and (optionally) tests the models against one warehouse: what
 * `pipeline models run` does, and what a `pipeline run` calls after loading. After an
 * incremental build the tests read only the rows the build touched (see `nightScopes`);
 * `pipeline models test` (testWarehouseModels) reads every row.
 */
export async function runModels(opts: RunModelsOptions): Promise<RunModelsResult> {
  const models = await discoverModels(opts.sqlDir ?? DEFAULT_SQL_DIR);
  const only = opts.select && opts.select.length > 0 ? withUpstream(models, opts.select) : undefined;
  return withWarehouse(opts.warehouseDir, (wh) => buildAndTestModels(wh, models, { ...opts, only }));
}

/**
 * Builds `models` (or `only` those) on an open warehouse and, with `test`, runs the sidecar
 * tests of the ones built: the models step of every run, and `pipeline models run`.
 */
export async function buildAndTestModels(
  wh: Warehouse,
  models: readonly Model[],
  opts: { fullRefresh?: boolean; only?: ReadonlySet<string>; test?: boolean; onModel?: (r: ModelBuildResult) => void },
): Promise<RunModelsResult> {
  const builds = await buildModels(wh, models, { fullRefresh: opts.fullRefresh, only: opts.only, onModel: opts.onModel });
  const built = new Set(builds.filter((b) => b.status === 'built').map((b) => b.name));
  // A night's tests read the night's rows (nightScopes); a full rebuild tests every row.
  const tests = opts.test
    ? await testModels(
        wh,
        models.filter((m) => built.has(m.name)),
        { scopes: nightScopes(models, builds) },
      )
    : [];
  // A warned test (a SERP item type never seen before, its rows kept) is not a failure.
  const ok = builds.every((b) => b.status !== 'failed') && tests.every((t) => t.status !== 'failed' && t.status !== 'error');
  return { builds, tests, ok };
}

/** Runs the sidecar tests of every model (or the selected ones) already in the warehouse. */
export async function testWarehouseModels(opts: {
  warehouseDir: string;
  sqlDir?: string;
  select?: readonly string[];
}): Promise<ModelTestResult[]> {
  const models = await discoverModels(opts.sqlDir ?? DEFAULT_SQL_DIR);
  const picked = opts.select && opts.select.length > 0 ? models.filter((m) => opts.select!.includes(m.name)) : models;
  return withWarehouse(opts.warehouseDir, (wh) => testModels(wh, picked));
}

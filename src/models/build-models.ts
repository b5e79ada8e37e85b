import { performance } from 'node:perf_hooks';
import type { Warehouse } from '../warehouse/index.js';
import { recordPublishedModelsOf } from './publish-list.js';
import { currentFingerprint, fullRefreshReason, saveFingerprint, storedBuild, type FingerprintCache } from './build-state.js';
import type { Model } from './model.js';
import { orderModels } from './order-models.js';
import { ident, listRelations, relationColumns } from './relation-info.js';
import { renderTemplate, type RenderContext } from './render-sql.js';

/** What happened to one model in `models run`: a result per model, never a throw at the first. */
export interface ModelBuildResult {
  name: string;
  materialized: Model['materialized'];
  status: 'built' | 'skipped' | 'failed';
  /** `incremental` when only rows from the last built key value on were rebuilt. */
  mode?: 'full' | 'incremental';
  /** Rows in the relation after the build (tables), or rows written (incremental). */
  rows?: number;
  /** For an incremental build: the SQL literal of the key value its rows were rebuilt from (the night's rows are those from it on). */
  since?: string;
  ms: number;
  message?: string;
  /** Passes of a build in slices (sidecar `slices`), when it took more than one. */
  passes?: number;
}

export interface BuildOptions {
  /** Rebuild incremental models from scratch. */
  fullRefresh?: boolean;
  /** Build only these models (callers add upstream models with `withUpstream`). */
  only?: ReadonlySet<string>;
  /** Called after each model, for progress lines. */
  onModel?: (r: ModelBuildResult) => void;
}

async function sourceProblem(wh: Warehouse, m: Model, relations: Map<string, string>): Promise<{ skip?: string; fail?: string }> {
  for (const [table, cols] of Object.entries(m.sidecar.sources ?? {})) {
    if (!relations.has(table.toLowerCase())) {
      return {
        skip: `source table ${table} is not in the warehouse (no pipeline has loaded it yet); ${m.name} and the models reading it are skipped`,
      };
    }
    const have = await relationColumns(wh, table);
    const missing = cols.filter((c) => !have.has(c.toLowerCase()));
    if (missing.length > 0) {
      return {
        fail: `source table ${table} lacks column(s) ${missing.join(', ')} that ${m.name} expects (declared in its sidecar); has: ${[...have].sort().join(', ')}`,
      };
    }
  }
  return {};
}

async function countRows(wh: Warehouse, name: string): Promise<number> {
  const [row] = await wh.all<{ n: number }>(`select count(*)::double as n from ${ident(name)}`);
  return Number(row?.n ?? 0);
}

async function lastBuiltLiteral(wh: Warehouse, table: string, key: string): Promise<string | undefined> {
  const [row] = await wh.all<{ t: string; v: string | null }>(
    `select typeof(max(${ident(key)})) as t, max(${ident(key)})::varchar as v from ${ident(table)}`,
  );
  if (!row || row.v === null) return undefined;
  return `cast('${row.v.replace(/'/g, "''")}' as ${row.t})`;
}

/**
 * How many passes a build of `m` takes (sidecar `slices`): its count, or one when `rows_of` holds
 * no more than `above` rows (from `since` on by the model's key, for an incremental build). A pass
 * reads the model's inputs again, so a small build is cheaper whole: `rank_history` on 100
 * keywords x 120 nights (1.2 million items, bench/models.ts) took 2.96 to 3.10 s in four passes
 * against 2.21 to 2.28 in one.
 */
async function passesOf(wh: Warehouse, m: Model, since?: string): Promise<number> {
  const s = m.sidecar.slices;
  if (!s) return 1;
  if (s.rows_of === undefined || s.above === undefined) return s.count;
  const where = since === undefined ? '' : ` where ${ident(m.sidecar.incremental!.key)} >= ${since}`;
  const [row] = await wh.all<{ n: number }>(`select count(*)::double as n from ${ident(s.rows_of)}${where}`);
  return Number(row?.n ?? 0) > s.above ? s.count : 1;
}

/**
 * The model's SQL for each of `count` passes (passesOf), each keeping the rows of its
 * `{{ in_slice(...) }}`. Passes share nothing but the table they fill, so a model whose windows
 * and joins hold all their rows at once holds a slice's at a time: rank_history on a
 * 100,000-keyword night (a million placements), 1,330 to 1,396 MB of peak RSS in one pass against
 * 754 to 971 in four, for about a second more (docs/performance.md).
 */
function slicesOf(m: Model, ctx: RenderContext, count: number): string[] {
  if (count === 1) return [renderTemplate(m.sql, ctx)];
  return Array.from({ length: count }, (_, index) => renderTemplate(m.sql, { ...ctx, slice: { index, count } }));
}

/**
 * `create` (`create or replace table`, or `... temp table`) `name` from the passes' SQL (slicesOf):
 * the first pass creates it, the others insert into it.
 */
async function createFrom(wh: Warehouse, create: string, name: string, passes: readonly string[]): Promise<void> {
  const [first, ...rest] = passes;
  await wh.run(`${create} ${name} as\n${first!}`);
  for (const sql of rest) await wh.run(`insert into ${name} by name\n${sql}`);
}

/** The result's `passes`, said only of a build in more than one. */
const passesField = (n: number): { passes?: number } => (n > 1 ? { passes: n } : {});

/** `create or replace table` from the model's SQL, pass by pass (slicesOf) in one transaction when it is built in slices. */
async function createInSlices(wh: Warehouse, m: Model, ctx: RenderContext): Promise<{ passes?: number }> {
  const passes = slicesOf(m, ctx, await passesOf(wh, m));
  const build = () => createFrom(wh, 'create or replace table', ident(m.name), passes);
  await (passes.length === 1 ? build() : wh.transaction(build));
  return passesField(passes.length);
}

async function materialize(
  wh: Warehouse,
  m: Model,
  relations: Map<string, string>,
  fullRefresh: boolean,
  cache: FingerprintCache,
): Promise<Pick<ModelBuildResult, 'mode' | 'rows' | 'message' | 'since' | 'passes'>> {
  const name = ident(m.name);
  const existing = relations.get(m.name.toLowerCase());
  if (existing === 'view' && m.materialized !== 'view') await wh.run(`drop view ${name}`);
  if (existing === 'table' && m.materialized === 'view') await wh.run(`drop table ${name}`);
  switch (m.materialized) {
    case 'seed': {
      const file = `'${m.file.replace(/'/g, "''")}'`;
      await wh.run(`create or replace table ${name} as select * from read_csv(${file}, header = true, auto_detect = true)`);
      return { mode: 'full', rows: await countRows(wh, m.name) };
    }
    case 'view':
      await wh.run(`create or replace view ${name} as\n${renderTemplate(m.sql, { self: m.name })}`);
      return { mode: 'full' };
    case 'table': {
      const passes = await createInSlices(wh, m, { self: m.name });
      return { mode: 'full', rows: await countRows(wh, m.name), ...passes };
    }
    case 'incremental': {
      const key = m.sidecar.incremental!.key;
      // A table built from other SQL or other full_refresh_on inputs is rebuilt in full.
      const fingerprint = await currentFingerprint(wh, m, cache);
      const stored = existing === 'table' && !fullRefresh ? await storedBuild(wh, m.name) : undefined;
      const reason = existing === 'table' && !fullRefresh ? fullRefreshReason(stored?.fingerprint, fingerprint) : undefined;
      const mark = m.sidecar.incremental!.watermark;
      // Where the rebuild starts: the watermark of the last build when the model has one (its
      // key is not the date its inputs arrive by), else the largest key value in the table.
      const since =
        existing === 'table' && !fullRefresh && !reason
          ? ((mark ? stored?.watermark : undefined) ?? (await lastBuiltLiteral(wh, m.name, key)))
          : undefined;
      // Read after the build, in its transaction: the largest value the build's inputs held.
      const watermarkNow = async () => (mark ? lastBuiltLiteral(wh, mark.relation, mark.column) : undefined);
      if (since === undefined) {
        const passes = await createInSlices(wh, m, { self: m.name, isIncremental: false });
        await saveFingerprint(wh, m.name, fingerprint, await watermarkNow(), true);
        return { mode: 'full', rows: await countRows(wh, m.name), ...(reason ? { message: reason } : {}), ...passes };
      }
      const ctx = { self: m.name, isIncremental: true, incrementalSince: since };
      const passes = await passesOf(wh, m, since);
      if (m.sidecar.incremental!.strategy === 'delete_insert') {
        // No copy of the new rows: with one they are held twice (the temp table, and the
        // insert's uncommitted rows).
        return wh.transaction(async () => {
          await wh.run(`delete from ${name} where ${ident(key)} >= ${since}`);
          let rows = 0;
          for (const sql of slicesOf(m, ctx, passes)) rows += Number((await wh.db.run(`insert into ${name} by name\n${sql}`)).rowsChanged);
          await saveFingerprint(wh, m.name, fingerprint, await watermarkNow());
          return { mode: 'incremental' as const, rows, since, ...passesField(passes) };
        });
      }
      const temp = ident(`__new_${m.name}`);
      return wh.transaction(async () => {
        await createFrom(wh, 'create or replace temp table', temp, slicesOf(m, ctx, passes));
        await wh.run(`delete from ${name} where ${ident(key)} >= ${since}`);
        await wh.run(`insert into ${name} by name select * from ${temp}`);
        const rows = await countRows(wh, `__new_${m.name}`);
        await wh.run(`drop table ${temp}`);
        await saveFingerprint(wh, m.name, fingerprint, await watermarkNow());
        return { mode: 'incremental' as const, rows, since, ...passesField(passes) };
      });
    }
  }
}

/**
 * Builds every model in dependency order: staging views, mart tables, incremental marts
 * (only rows from the last built key value on; in full when the model's SQL or an input
 * listed in its `incremental.full_refresh_on` changed since its last build). A model whose source table is absent is
 * skipped with the reason, and so is everything downstream of it; a failing model does not
 * stop the others. Returns one result per model.
 */
export async function buildModels(wh: Warehouse, models: readonly Model[], opts: BuildOptions = {}): Promise<ModelBuildResult[]> {
  const results: ModelBuildResult[] = [];
  const notBuilt = new Map<string, string>();
  const fingerprints: FingerprintCache = new Map();
  await recordPublishedModelsOf(wh, models);
  for (const m of orderModels(models)) {
    if (opts.only && !opts.only.has(m.name)) continue;
    const t0 = performance.now();
    const done = (r: Omit<ModelBuildResult, 'name' | 'materialized' | 'ms'>) => {
      const res: ModelBuildResult = { name: m.name, materialized: m.materialized, ms: Math.round(performance.now() - t0), ...r };
      if (res.status !== 'built') notBuilt.set(m.name, res.status);
      results.push(res);
      opts.onModel?.(res);
    };
    const upstream = m.dependsOn.find((d) => notBuilt.has(d));
    if (upstream) {
      done({ status: 'skipped', message: `upstream model ${upstream} was ${notBuilt.get(upstream)}` });
      continue;
    }
    const relations = await listRelations(wh);
    const problem = await sourceProblem(wh, m, relations);
    if (problem.skip) {
      done({ status: 'skipped', message: problem.skip });
      continue;
    }
    if (problem.fail) {
      done({ status: 'failed', message: problem.fail });
      continue;
    }
    try {
      fingerprints.delete(m.name.toLowerCase());
      done({ status: 'built', ...(await materialize(wh, m, relations, opts.fullRefresh ?? false, fingerprints)) });
    } catch (err) {
      const hint = m.materialized === 'incremental' ? ' (if its columns changed, run again with --full-refresh)' : '';
      done({ status: 'failed', message: `${(err as Error).message}${hint}` });
    }
  }
  return results;
}

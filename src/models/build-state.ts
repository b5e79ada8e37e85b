import { createHash } from 'node:crypto';
import type { Warehouse } from '../warehouse/index.js';
import type { Model } from './model.js';
import { ident } from './relation-info.js';

/**
 * What an incremental model was last built from: its SQL and the contents of the inputs
 * its sidecar lists under `incremental.full_refresh_on`. Kept in `model_state`; when
 * either differs, the next build is a full one (new columns, a new tracked domain).
 */
export interface BuildFingerprint {
  sql: string;
  inputs: Record<string, string>;
}

const STATE = 'model_state';

/** Fingerprints of relations already read in this `models run` (dropped when the relation is rebuilt). */
export type FingerprintCache = Map<string, string>;

async function relationFingerprint(wh: Warehouse, name: string, cache: FingerprintCache): Promise<string> {
  const key = name.toLowerCase();
  const known = cache.get(key);
  if (known !== undefined) return known;
  // Order-free: the count and the sum of the row hashes.
  const [row] = await wh.all<{ n: string; s: string | null }>(
    `select count(*)::varchar as n, sum(hash(t))::varchar as s from ${ident(name)} as t`,
  );
  const fp = `${row?.n ?? 0}:${row?.s ?? 0}`;
  cache.set(key, fp);
  return fp;
}

/** The fingerprint of an incremental model as it would be built now. */
export async function currentFingerprint(wh: Warehouse, m: Model, cache: FingerprintCache): Promise<BuildFingerprint> {
  const inputs: Record<string, string> = {};
  for (const name of m.sidecar.incremental?.full_refresh_on ?? []) inputs[name] = await relationFingerprint(wh, name, cache);
  return { sql: createHash('sha256').update(m.sql).digest('hex').slice(0, 16), inputs };
}

/** Warehouses whose state table is known to exist with every column (checked once per open warehouse). */
const ensured = new WeakSet<Warehouse>();

async function ensureState(wh: Warehouse): Promise<void> {
  if (ensured.has(wh)) return;
  await wh.run(`create table if not exists ${STATE} (model varchar primary key, fingerprint json, built_at timestamptz)`);
  // Columns a warehouse made by an older version lacks: added on its next build.
  await wh.run(`alter table ${STATE} add column if not exists watermark varchar`);
  await wh.run(`alter table ${STATE} add column if not exists full_at timestamptz`);
  ensured.add(wh);
}

/**
 * What the model's last build recorded, if this warehouse has it: its fingerprint, and its
 * watermark (a SQL literal) when the model has an `incremental.watermark`.
 */
export async function storedBuild(
  wh: Warehouse,
  model: string,
): Promise<{ fingerprint: BuildFingerprint; watermark?: string } | undefined> {
  await ensureState(wh);
  const [row] = await wh.all<{ f: string; w: string | null }>(
    `select fingerprint::varchar as f, watermark as w from ${STATE} where model = ?`,
    [model],
  );
  if (!row) return undefined;
  return { fingerprint: JSON.parse(row.f) as BuildFingerprint, ...(row.w !== null ? { watermark: row.w } : {}) };
}

/**
 * Records a build: its fingerprint and, for a model with an `incremental.watermark`, the SQL
 * literal of the largest watermark value its inputs held (where the next build starts); and,
 * for a build in full (`full`: a first build, changed SQL or inputs, `--full-refresh`), when:
 * the publish then rewrites every partition of the model (publish.ts `modelFingerprints`), as
 * a full refresh after a back-filled night changes days before the last one published.
 */
export async function saveFingerprint(wh: Warehouse, model: string, fp: BuildFingerprint, watermark?: string, full = false): Promise<void> {
  await ensureState(wh);
  await wh.run(
    `insert into ${STATE} (model, fingerprint, built_at, watermark, full_at) values (?, ?::json, now(), ?, case when ? then now() end)
     on conflict (model) do update set fingerprint = excluded.fingerprint, built_at = excluded.built_at, watermark = excluded.watermark,
       full_at = coalesce(excluded.full_at, ${STATE}.full_at)`,
    [model, JSON.stringify(fp), watermark ?? null, full],
  );
}

/** Why a model must be rebuilt in full rather than incrementally, or undefined when it need not be. */
export function fullRefreshReason(stored: BuildFingerprint | undefined, now: BuildFingerprint): string | undefined {
  if (!stored) return 'rebuilt in full: no record of its last build';
  if (stored.sql !== now.sql) return 'rebuilt in full: its SQL changed since the last build';
  const changed = Object.keys(now.inputs).filter((k) => stored.inputs[k] !== now.inputs[k]);
  if (changed.length > 0) return `rebuilt in full: ${changed.join(', ')} changed since the last build`;
  return undefined;
}

import { recordPublishedModels, type PublishedModel, type Warehouse } from '../warehouse/index.js';
import { CLUSTER_TABLES } from './clusters/cluster-tables.js';
import { discoverModels } from './discover-models.js';
import type { Model } from './model.js';

/**
 * What the publish writes of the models stage: every mart (partitioned by its sidecar's
 * `partition_by`) and the clustering tables marked `publish`. A mart is published by being
 * in sql/marts with its sidecar: no list to edit.
 */
export function publishedModelsOf(models: readonly Model[]): PublishedModel[] {
  const marts = models
    .filter((m) => m.layer === 'marts')
    .map((m) => ({
      name: m.name,
      ...(m.sidecar.partition_by ? { date: m.sidecar.partition_by } : {}),
      ...(m.materialized === 'incremental' ? { incremental: true } : {}),
    }));
  const clusters = CLUSTER_TABLES.filter((t) => t.publish).map((t) => ({
    name: t.name,
    ...(t.publish?.partitionBy ? { date: t.publish.partitionBy } : {}),
  }));
  return [...marts, ...clusters];
}

/** Records in the warehouse what the next publish writes of these models (`published_relations`). */
export async function recordPublishedModelsOf(wh: Warehouse, models: readonly Model[]): Promise<void> {
  await recordPublishedModels(wh, publishedModelsOf(models));
}

/**
 * Before a publish that follows no models build (`export`, `replay`, a run that built none):
 * a warehouse whose list is empty (made before the list was kept) gets the list of the
 * models under `sqlDir` (the tool's own sql/, DEFAULT_SQL_DIR), so its marts stay published.
 */
export async function ensurePublishedModelsRecorded(wh: Warehouse, sqlDir: string): Promise<void> {
  const [row] = await wh.all<{ n: number }>(`select count(*)::integer as n from published_relations`);
  if ((row?.n ?? 0) > 0) return;
  await recordPublishedModelsOf(wh, await discoverModels(sqlDir));
}

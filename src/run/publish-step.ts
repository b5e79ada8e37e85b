import { DEFAULT_SQL_DIR, ensurePublishedModelsRecorded } from '../models/index.js';
import { publish, type PublishOutcome, type Warehouse } from '../warehouse/index.js';
import { killPoint } from './kill-point.js';

/** What the publish step wrote, for the summary (the file lists stay with the lake step). */
export interface PublishedSummary {
  seq: number;
  tables: number;
  partitions: number;
  files: number;
  removed: number;
  ms: number;
}

/**
 * Publishes what changed for readers: Parquet of the rows the night added or replaced
 * (state tables, data tables, marts and clusters) and a fresh `serving.duckdb`. The last
 * local step of a run, after the models, so BI tools never see marts older than the data.
 */
export async function publishStep(wh: Warehouse, now: () => Date): Promise<PublishedSummary> {
  await ensurePublishedModelsRecorded(wh, DEFAULT_SQL_DIR);
  const p: PublishOutcome = await publish(wh, { now, onStep: (s) => (s === 'committed' ? killPoint('publish', 'middle') : undefined) });
  return {
    seq: p.seq,
    tables: p.tables.length,
    partitions: p.tables.reduce((a, t) => a + t.partitions, 0),
    files: p.written.length,
    removed: p.removed.length,
    ms: p.ms,
  };
}

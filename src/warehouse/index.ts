/**
 * The warehouse, the one door of the stage: the DuckDB file and its tables at the top, then its
 * stages as the data goes through them: landing (raw bodies kept and indexed), normalize (bodies
 * turned into typed rows), load (landed answers selected, planned and committed), publish
 * (Parquet and the serving copy), and state (the runs' and tasks' working state).
 */
import type * as ArrowRead from './arrow-read.js';

export * from './warehouse.js';
export * from './alerts-table.js';
export * from './bulk.js';
export * from './columns.js';
export * from './depth-reads.js';
export * from './collect-garbage.js';
export * from './held-rows.js';
export * from './ledger.js';
export * from './schema-doc.js';
export * from './service-readings.js';
export * from './tables.js';
export * from './tracked-domains.js';
export * from './landing/landed-line.js';
export * from './landing/raw-landing.js';
export * from './landing/write-durably.js';
export * from './landing/group-commit.js';
export * from './landing/raw-index.js';
export * from './landing/landed-answer.js';
export * from './landing/compact.js';
export * from './landing/reindex.js';
export * from './normalize/result-tables/index.js';
export * from './normalize/shape.js';
export * from './load/load-landed.js';
export * from './load/replay.js';
export * from './publish/index.js';
export * from './publish/parquet.js';
export * from './state/lifecycle.js';
export * from './state/run-store.js';

// Arrow reads load Apache Arrow when first called: every command that opens the warehouse
// imports this index, and `pipeline ledger` or `status` must not pay for Arrow at start-up.
export const tableColumns: typeof ArrowRead.tableColumns = async (wh, table) => (await import('./arrow-read.js')).tableColumns(wh, table);
export const tableArrowSchema: typeof ArrowRead.tableArrowSchema = async (wh, table) =>
  (await import('./arrow-read.js')).tableArrowSchema(wh, table);
export const tableBatches: typeof ArrowRead.tableBatches = async function* (wh, table, o) {
  yield* (await import('./arrow-read.js')).tableBatches(wh, table, o);
};

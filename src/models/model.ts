import type { Sidecar } from './sidecar.js';

/** How a model lands in DuckDB. */
export type Materialization = 'view' | 'table' | 'incremental' | 'seed';

/** One model found under `sql/`: a `.sql` (or a seed `.csv`) and its sidecar. */
export interface Model {
  /** The relation name in DuckDB: the file name without extension. */
  name: string;
  /** `staging`, `intermediate`, `marts`, `seeds` ... (the first folder under `sql/`). */
  layer: string;
  /** Absolute path of the `.sql` or `.csv` file. */
  file: string;
  /** The SQL text (empty for seeds). */
  sql: string;
  sidecar: Sidecar;
  materialized: Materialization;
  /** Other models this one reads, found in its SQL. */
  dependsOn: string[];
}

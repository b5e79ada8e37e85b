/**
 * The lake: the published layout (`parquet/` and `serving.duckdb`) mirrored to any
 * S3-compatible store, for readers that are not on this machine (docs/lake.md).
 */
export { checkLake, type LakeCheck } from './check-lake.js';
export { syncLake, type LakeOutcome, type LakeFailure, type SyncLakeOptions } from './sync-lake.js';
export { parseLakeAddress, type LakeAddress } from './lake-address.js';
export type { LakeEnv, LakeClientOptions } from './lake-client.js';
export { MANIFEST_KEY, type Manifest, type ManifestEntry } from './manifest.js';
export { formatLakeOutcome } from './format-outcome.js';

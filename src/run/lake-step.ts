import type { LakeOutcome } from '../lake/index.js';
import { killPoint } from './kill-point.js';

/** The AWS SDK takes over a second to load: only runs with a lake pay for it. */
const lake = () => import('../lake/index.js');

/**
 * Checks the lake before anything is bought: a bad address or refused credentials stop the
 * run with a clear error (exit 2, 5 or 6) while nothing has been spent.
 */
export async function lakePreflight(url: string | undefined, env: NodeJS.ProcessEnv): Promise<void> {
  if (url) await (await lake()).checkLake(url, env);
}

/**
 * Mirrors what publishing wrote (`parquet/`, `serving.duckdb`) to the lake; a rerun uploads
 * nothing it already uploaded. A failure here costs no paid result: it is reported in the
 * outcome, and the next run (or `pipeline lake sync`) finishes the job.
 */
export async function lakeStep(
  warehouseDir: string,
  url: string,
  env: NodeJS.ProcessEnv,
): Promise<LakeOutcome | { url: string; error: string; code: string }> {
  const { syncLake } = await lake();
  try {
    return await syncLake(warehouseDir, url, { env, onFile: (f) => f.action === 'uploaded' && killPoint('lake', 'middle') });
  } catch (err) {
    const e = err as { message?: string; code?: string };
    return { url, error: e.message ?? String(err), code: e.code ?? 'ETL_INTERNAL' };
  }
}

/** Whether the lake step put every file up (the run's journal records it done only then). */
export function lakeSynced(o: LakeOutcome | { error: string }): boolean {
  return !('error' in o) && o.failed.length === 0;
}

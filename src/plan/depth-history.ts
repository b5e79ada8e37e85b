import type { Pipeline } from '../config/index.js';
import { depthReads, type Warehouse } from '../warehouse/index.js';
import { nightOf, seriesKey, type DepthHistory, type SeriesHistory } from './auto-depth.js';

/** The tracked domains of a pipeline's `depth: auto` jobs (empty: it has none). */
export function autoTrackedDomains(pipeline: Pipeline): string[] {
  const out = new Set<string>();
  for (const job of pipeline.jobs) if (job.kind === 'serp' && job.depth === 'auto') for (const d of job.track_domains ?? []) out.add(d);
  return [...out].sort();
}

/**
 * What `depth: auto` chooses from: each series' last check before run `runId` (its own checks
 * left out, so a resumed run chooses as it did), the deepest it was ever looked at, and the
 * tracked domains ranked on that last check; tonight is the UTC day of `at`. Undefined when
 * the pipeline has no `auto` job.
 */
export async function readDepthHistory(wh: Warehouse, pipeline: Pipeline, runId: string, at: Date): Promise<DepthHistory | undefined> {
  const domains = autoTrackedDomains(pipeline);
  if (domains.length === 0) return undefined;
  const series = new Map<string, SeriesHistory & { seen: { domain: string; rank: number }[] }>();
  for (const r of await depthReads.seriesChecks(wh, runId, domains)) {
    const key = seriesKey(r.keyword, r.location_code, r.language_code, r.device, r.engine);
    const s = series.get(key) ?? { lastDate: r.last_date, deepest: r.deepest, seen: [] };
    if (r.domain !== null && r.rank !== null) s.seen.push({ domain: r.domain, rank: r.rank });
    series.set(key, s);
  }
  return { series, night: nightOf(at) };
}

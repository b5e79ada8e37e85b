import { loadPipeline } from '../config/index.js';
import { listRelations, relationColumns } from '../models/index.js';
import type { ReportContext } from './report-context.js';

/** A hostname as the marts write it: lower case, without a leading `www.`. */
export function normaliseDomain(d: string): string {
  return d
    .trim()
    .toLowerCase()
    .replace(/^www\./, '');
}

/**
 * Fills `ctx.tracked` with the `track_domains` of each pipeline's SERP jobs, from the first
 * source that has them: the pipeline files given (`--pipeline-file`), else a
 * `tracked_domains` table in the warehouse (columns `pipeline` and `domain`), else, when
 * neither says, the `fallbackTop` domains with the most visibility, marked as such.
 */
export async function resolveTrackedDomains(ctx: ReportContext, pipelineFiles: readonly string[], fallbackTop = 3): Promise<void> {
  const add = (pipeline: string, domain: string) => {
    const set = ctx.tracked.get(pipeline) ?? new Set<string>();
    set.add(normaliseDomain(domain));
    ctx.tracked.set(pipeline, set);
  };
  if (pipelineFiles.length > 0) {
    for (const file of pipelineFiles) {
      const p = await loadPipeline(file);
      for (const job of p.jobs) if (job.kind === 'serp') for (const d of job.track_domains ?? []) add(p.name, d);
    }
    ctx.trackedSource = `track_domains of ${pipelineFiles.join(', ')}`;
    return;
  }
  const rel = await listRelations(ctx.wh);
  if (rel.has('tracked_domains')) {
    const cols = await relationColumns(ctx.wh, 'tracked_domains');
    if (cols.has('pipeline') && cols.has('domain')) {
      const rows = await ctx.wh.all<{ pipeline: string; domain: string }>(
        `select distinct pipeline, domain from tracked_domains where domain is not null and ${ctx.inScope('pipeline')}`,
      );
      for (const r of rows) add(r.pipeline, r.domain);
      if (rows.length > 0) {
        ctx.trackedSource = 'the warehouse table tracked_domains';
        return;
      }
    }
  }
  if (!rel.has('domain_visibility_daily')) {
    ctx.trackedSource = 'none (no tracked_domains table, no pipeline file, no visibility model)';
    ctx.notes.push('No tracked domains: pass --pipeline-file to name them.');
    return;
  }
  const top = await ctx.wh.all<{ domain: string }>(
    `select domain from domain_visibility_daily group by domain order by sum(visibility) desc, domain limit ${Math.max(0, Math.floor(fallbackTop))}`,
  );
  const pipelines = await ctx.wh.all<{ pipeline: string }>(
    `select distinct pipeline from report_task_pipeline where ${ctx.inScope('pipeline')}`,
  );
  for (const { pipeline } of pipelines) for (const { domain } of top) add(pipeline, domain);
  ctx.trackedSource = `the ${top.length} domains with the most visibility (the warehouse does not store track_domains; pass --pipeline-file to use them)`;
  ctx.notes.push(`Tracked domains are a stand-in: ${ctx.trackedSource}.`);
}

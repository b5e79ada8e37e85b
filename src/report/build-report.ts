import { writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { EtlError } from '../errors.js';
import { makeDirs, pathError } from '../paths.js';
import { listRelations } from '../models/index.js';
import { withWarehouse, type Warehouse } from '../warehouse/index.js';
import { alertsSection } from './alerts-section.js';
import { clusterSection } from './cluster-section.js';
import type { ReportPayload } from './payload.js';
import { rankSection, registerRankKeywords } from './rank-section.js';
import { renderHtml } from './render-html.js';
import { ReportContext, type ReportScope } from './report-context.js';
import { DEFAULT_SCOPE } from './scope.js';
import { spendSection } from './spend-section.js';
import { resolveTrackedDomains } from './tracked-domains.js';
import { visibilitySection } from './visibility-section.js';
import { volumeSection } from './volume-section.js';

/** The marts the report draws; a warehouse with none of them has not been modelled yet. */
export const REPORT_MODELS = ['rank_history', 'domain_visibility_daily', 'search_volume_trends', 'spend_daily'] as const;

export interface BuildReportOptions extends Partial<ReportScope> {
  warehouseDir: string;
  /** Where to write the HTML file. */
  out: string;
  /** Pipeline files whose serp jobs' `track_domains` name the tracked domains. */
  pipelineFiles?: readonly string[];
  now?: () => Date;
}

export interface BuildReportResult {
  out: string;
  bytes: number;
  /** Series drawn per chart before any filter, and what the report left out. */
  counts: {
    rankKeywords: number;
    rankSeries: number;
    visibilityDomains: number;
    volumeSeries: number;
    clusterPoints: number;
    spendRows: number;
    alerts: number;
  };
  trackedSource: string;
  notes: string[];
}

export { DEFAULT_SCOPE } from './scope.js';

/**
 * Reads the warehouse's models and writes one self-contained HTML report: rank history
 * per keyword (tracked domains and their closest competitors), visibility per domain,
 * search-volume trends and seasonality, the keyword-cluster map and spend per day and
 * endpoint, with pipeline, location and domain filters that work in the page.
 */
export async function buildReport(o: BuildReportOptions): Promise<BuildReportResult> {
  const scope = reportScope(o);
  const payload = await withWarehouse(o.warehouseDir, (wh) => readPayload(wh, scope, o));
  const title = `Search report${scope.pipelines ? ` — ${scope.pipelines.join(', ')}` : ''}`;
  const html = await renderHtml(payload, title);
  const out = resolve(o.out);
  await writeReport(out, html, o.out);
  return {
    out,
    bytes: Buffer.byteLength(html),
    counts: payloadCounts(payload),
    trackedSource: payload.trackedSource,
    notes: payload.notes,
  };
}

/** The report's scope: the options over the defaults, each checked to be a whole number in range. */
function reportScope(o: BuildReportOptions): ReportScope {
  const scope: ReportScope = {
    days: o.days ?? DEFAULT_SCOPE.days,
    topKeywords: o.topKeywords ?? DEFAULT_SCOPE.topKeywords,
    competitors: o.competitors ?? DEFAULT_SCOPE.competitors,
    visibilityDomains: o.visibilityDomains ?? DEFAULT_SCOPE.visibilityDomains,
    ...(o.pipelines?.length ? { pipelines: o.pipelines } : {}),
  };
  for (const [name, value, min] of [
    ['days', scope.days, 1],
    ['top-keywords', scope.topKeywords, 0],
    ['competitors', scope.competitors, 0],
    ['visibility domains', scope.visibilityDomains, 0],
  ] as const) {
    if (!Number.isInteger(value) || value < min) {
      throw new EtlError('ETL_CONFIG_INVALID', `--${name.replace(' ', '-')} must be a whole number of at least ${min}, got ${value}`, {
        context: { stage: 'report' },
      });
    }
  }
  return scope;
}

/** The page's data: every section read from the warehouse's models, in the order their dictionaries fill. */
async function readPayload(wh: Warehouse, scope: ReportScope, o: BuildReportOptions): Promise<ReportPayload> {
  const rel = await listRelations(wh);
  if (!REPORT_MODELS.some((m) => rel.has(m))) {
    throw new EtlError(
      'ETL_CONFIG_INVALID',
      `the warehouse at ${o.warehouseDir} has no model tables (${REPORT_MODELS.join(', ')}); run \`pipeline run <pipeline file>\` and then \`pipeline models run\` first.`,
      { context: { stage: 'report' } },
    );
  }
  const ctx = new ReportContext(wh, scope);
  await ctx.prepare();
  if (scope.pipelines) await checkPipelines(ctx, scope.pipelines);
  await resolveTrackedDomains(ctx, o.pipelineFiles ?? []);
  await ctx.storeTracked();
  const rank = await rankSection(ctx);
  const visibility = await visibilitySection(ctx);
  await registerRankKeywords(ctx, rank);
  const volume = await volumeSection(ctx);
  const clusters = await clusterSection(ctx);
  const spend = await spendSection(ctx);
  const alerts = await alertsSection(ctx);
  for (const p of ctx.tracked.keys()) {
    if (ctx.pipelines.find(p) === undefined)
      ctx.notes.push(`Tracked domains were given for pipeline ${p}, which has no data in this report.`);
  }
  const out: ReportPayload = {
    v: 1,
    generatedAt: (o.now ?? (() => new Date()))().toISOString(),
    pipelines: [],
    locations: ctx.locationsPayload(),
    domains: [],
    tracked: ctx.trackedPayload(),
    trackedSource: ctx.trackedSource,
    pipelineLocations: ctx.pipelineLocationsPayload(),
    keywords: ctx.keywordIndex(),
    rank,
    visibility,
    volume,
    clusters,
    spend,
    alerts,
    notes: ctx.notes,
  };
  // Filled last: the sections above add to these dictionaries as they go.
  out.pipelines = ctx.pipelines.values;
  out.domains = ctx.domains.values;
  return out;
}

/** Writes the page to `out`, making missing folders; `given` is the path as the user wrote it. */
async function writeReport(out: string, html: string, given: string): Promise<void> {
  // Not mkdir's `recursive`, which spins forever where a folder cannot be made (/proc/1/x).
  await makeDirs(dirname(out))
    .then(() => writeFile(out, html))
    .catch((err: unknown) => {
      throw pathError(err, `--out ${given}`, 'Pass an HTML file in a folder you can write (missing folders are made).');
    });
}

/** Series drawn per chart before any filter. */
function payloadCounts(payload: ReportPayload): BuildReportResult['counts'] {
  return {
    rankKeywords: payload.rank?.keywordsShown ?? 0,
    rankSeries: payload.rank?.series.length ?? 0,
    visibilityDomains: new Set(payload.visibility?.series.map((s) => s[0]) ?? []).size,
    volumeSeries: payload.volume?.series.length ?? 0,
    clusterPoints: payload.clusters?.points.length ?? 0,
    spendRows: payload.spend?.rows.length ?? 0,
    alerts: payload.alerts?.total ?? 0,
  };
}

async function checkPipelines(ctx: ReportContext, wanted: readonly string[]): Promise<void> {
  const known = (
    await ctx.wh.all<{ p: string }>(
      `select distinct pipeline as p from (select pipeline from report_task_pipeline union all select pipeline from ledger) where pipeline is not null order by p`,
    )
  ).map((r) => r.p);
  const unknown = wanted.filter((p) => !known.includes(p));
  if (unknown.length > 0) {
    throw new EtlError(
      'ETL_CONFIG_INVALID',
      `no pipeline ${unknown.join(', ')} in the warehouse at ${ctx.wh.dir}; it has: ${known.join(', ') || '(none)'}.`,
      { context: { stage: 'report' } },
    );
  }
}

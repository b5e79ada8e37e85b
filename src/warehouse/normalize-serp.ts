import type { Table } from 'apache-arrow';
import type { EnvelopeTask } from '../client/index.js';
import { rowsToArrow, type Row } from './arrow-build.js';
import { serpItemsTable, serpResultsTable } from './tables.js';

export interface SerpBatches {
  results: Table;
  items: Table;
}

const RESULT_FIELDS = new Set([
  'keyword', 'type', 'se_domain', 'location_code', 'language_code', 'check_url', 'datetime',
  'spell', 'item_types', 'se_results_count', 'items_count', 'items',
]);
const ITEM_FIELDS = new Set([
  'type', 'rank_group', 'rank_absolute', 'position', 'domain', 'title', 'url', 'breadcrumb',
  'website_name', 'description', 'is_featured_snippet', 'is_image', 'is_video', 'xpath',
]);

/** Parses the service's `yyyy-mm-dd hh:mm:ss +00:00` timestamps. */
export function parseServiceTime(s: unknown): Date | null {
  if (typeof s !== 'string') return null;
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.\d+)?\s*([+-]\d{2}:?\d{2}|Z)?$/.exec(s.trim());
  if (!m) return null;
  const d = new Date(`${m[1]}T${m[2]}${m[3] ?? 'Z'}`);
  return Number.isNaN(d.getTime()) ? null : d;
}

function rest(obj: Record<string, unknown>, declared: ReadonlySet<string>): string | null {
  const out: Record<string, unknown> = {};
  let any = false;
  for (const [k, v] of Object.entries(obj)) {
    if (declared.has(k) || v === null || v === undefined) continue;
    out[k] = v;
    any = true;
  }
  return any ? JSON.stringify(out) : null;
}

function utcDay(d: Date | null): Date | null {
  return d ? new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())) : null;
}

function obj(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/**
 * Flattens one SERP `task_get` task into rows of `serp_results` (one per result) and
 * `serp_items` (one per item), as Arrow tables with the declared schemas. Declared fields
 * become typed columns; every other field is kept in the row's `extra` JSON.
 */
export function normalizeSerpTask(task: EnvelopeTask, ctx: { runId: string | null }): SerpBatches {
  return normalizeSerpTasks([task], ctx);
}

/** Flattens many tasks into one pair of tables, so a whole group loads in one transaction. */
export function normalizeSerpTasks(tasks: readonly EnvelopeTask[], ctx: { runId: string | null }): SerpBatches {
  const results: Row[] = [];
  const items: Row[] = [];
  for (const task of tasks) flattenTask(task, ctx, results, items);
  return { results: rowsToArrow(serpResultsTable, results), items: rowsToArrow(serpItemsTable, items) };
}

function flattenTask(task: EnvelopeTask, ctx: { runId: string | null }, results: Row[], items: Row[]): void {
  const taskId = task.id ?? '';
  const data = obj(task.data);
  (task.result ?? []).forEach((raw, resultIndex) => {
    const r = obj(raw);
    const checkedAt = parseServiceTime(r.datetime);
    const checkDate = utcDay(checkedAt);
    results.push({
      task_id: taskId,
      result_index: resultIndex,
      tag: data.tag ?? null,
      run_id: ctx.runId,
      se: data.se ?? null,
      se_type: r.type ?? data.se_type ?? null,
      keyword: r.keyword ?? data.keyword ?? null,
      location_code: r.location_code ?? data.location_code ?? null,
      language_code: r.language_code ?? data.language_code ?? null,
      device: data.device ?? null,
      os: data.os ?? null,
      se_domain: r.se_domain,
      check_url: r.check_url,
      checked_at: checkedAt,
      check_date: checkDate,
      se_results_count: r.se_results_count,
      items_count: r.items_count,
      item_types: r.item_types,
      spell: r.spell ?? null,
      extra: rest(r, RESULT_FIELDS),
    });
    const list = Array.isArray(r.items) ? r.items : [];
    list.forEach((rawItem, itemIndex) => {
      const it = obj(rawItem);
      const rating = obj(it.rating);
      items.push({
        task_id: taskId,
        result_index: resultIndex,
        item_index: itemIndex,
        check_date: checkDate,
        type: it.type,
        rank_group: it.rank_group,
        rank_absolute: it.rank_absolute,
        position: it.position,
        domain: it.domain,
        title: it.title,
        url: it.url,
        breadcrumb: it.breadcrumb,
        website_name: it.website_name,
        description: it.description,
        is_featured_snippet: it.is_featured_snippet,
        is_image: it.is_image,
        is_video: it.is_video,
        rating_value: rating.value,
        rating_votes_count: rating.votes_count,
        xpath: it.xpath,
        extra: rest(it, ITEM_FIELDS),
      });
    });
  });
}

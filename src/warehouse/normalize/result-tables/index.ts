import { matchEndpoint, type Endpoint, type ResultKind } from '../../../catalog/index.js';
import type { TableSpec } from '../../columns.js';
import { aiKeywordVolumeKind, llmResponsesKind } from './ai.js';
import { backlinksKind, referringDomainsKind } from './backlinks.js';
import { callIdKey, indexKey, taskIdKey, type KindSpec } from './define.js';
import { embeddingsKind } from './embeddings.js';
import { adsKeywordsKind, searchVolumeKind } from './keywords.js';
import { rankedKeywordsKind, relatedKeywordsKind } from './labs.js';
import { onPageLinksKind, onPagePagesKind, onPageResourcesKind } from './on-page.js';
import { serpKind } from './serp.js';
import { trendsKind } from './trends.js';

export type { KindSpec } from './define.js';

/** Every kind with a declared, stable schema. */
export const DECLARED_KINDS: readonly KindSpec[] = [
  serpKind,
  searchVolumeKind,
  adsKeywordsKind,
  trendsKind,
  rankedKeywordsKind,
  relatedKeywordsKind,
  backlinksKind,
  referringDomainsKind,
  onPagePagesKind,
  onPageLinksKind,
  onPageResourcesKind,
  aiKeywordVolumeKind,
  llmResponsesKind,
  embeddingsKind,
];

/** Every declared data table, parents first. */
export const DECLARED_TABLES: readonly TableSpec[] = DECLARED_KINDS.flatMap((k) => k.tables);

/** Responses that only move tasks along (their facts live in the tasks table): landed, never normalized. */
export const CALLS_KIND = '_calls';

/** Catalog result kinds of calls that only move tasks along (the `task_post` answers are the fourth). */
const LIFECYCLE_RESULTS: ReadonlySet<ResultKind> = new Set(['tasks_ready', 'tasks_fixed', 'webhook_resend']);
const LIFECYCLE = /\/(task_post|tasks_ready|tasks_fixed|webhook_resend)(\/|$)/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DROPPED_SEGMENTS = new Set(['v1', 'v3', 'task_get', 'live', 'advanced']);

/**
 * The kind of a response, from the catalog: the endpoint its path belongs to names a
 * `resultKind`, and the declared kind that reads it (`reads`) normalizes it; `task_post`
 * answers and the ready, fixed and resend lists are `_calls`; any other endpoint gets a
 * generic kind named after its path (`/v3/merchant/engA/products/task_get/advanced/{id}`
 * gives `merchant_eng_a_products`). Paths the catalog does not know, and `.ai` variants
 * (whose bodies are reshaped, so the plain form's tables do not fit them), fall back to the
 * declared kinds' path patterns (`/v3/backlinks/backlinks/live` gives `backlinks`, and
 * `/v3/backlinks/anchors/live` the generic `backlinks_anchors`).
 */
export function kindOfPath(path: string): string {
  const p = path.split('?')[0]!;
  const e = catalogEndpoint(p);
  if (!e) return kindByPattern(p);
  if (e.mode === 'task_post' || (e.resultKind && LIFECYCLE_RESULTS.has(e.resultKind))) return CALLS_KIND;
  return DECLARED_KINDS.find((k) => k.reads?.some((r) => r.resultKind === e.resultKind && (!r.format || r.format === e.format)))?.kind ?? genericKind(p);
}

/** The plain (not `.ai`) catalog entry of a path, whatever its method. */
function catalogEndpoint(path: string): Endpoint | undefined {
  try {
    const m = matchEndpoint('POST', path) ?? matchEndpoint('GET', path);
    return m && !m.ai ? m.endpoint : undefined;
  } catch {
    return undefined; // a malformed %-escape: not a path of the catalog
  }
}

/** The fallback: the declared kinds' path patterns, the lifecycle paths, else a generic kind. */
function kindByPattern(p: string): string {
  const declared = DECLARED_KINDS.find((k) => k.match.test(p));
  if (declared) return declared.kind;
  if (LIFECYCLE.test(p)) return CALLS_KIND;
  return genericKind(p);
}

/** A kind named after the path's segments, without versions, task ids and format words. */
function genericKind(p: string): string {
  const name = p
    .replace(/\.ai$/, '_ai')
    .split('/')
    .filter((s) => s !== '' && !DROPPED_SEGMENTS.has(s) && !UUID.test(s))
    .map(snake)
    .join('_');
  return name === '' ? 'root' : name.slice(0, 60);
}

/** snake_case for names that come from the body (dlt's rule: lower-case, `_` for anything else). */
export function snake(s: string): string {
  const out = s
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return out === '' ? '_' : /^[0-9]/.test(out) ? `_${out}` : out;
}

/**
 * The tables of a kind: the declared ones, or for a generic kind one root table (rows are
 * `tasks[].result[]` of an envelope, or the body itself) whose columns and child tables
 * all come from the bodies' shapes.
 */
export function kindSpec(kind: string, envelope: boolean): KindSpec {
  const declared = DECLARED_KINDS.find((k) => k.kind === kind);
  if (declared) return declared;
  const root: TableSpec = envelope
    ? { name: kind, grain: `one row per result of ${kind}`, rows: 'tasks[].result[]', replaceKey: 'task_id', columns: [taskIdKey, indexKey('result_index', 'tasks[].result[]')] }
    : { name: kind, grain: `one row per ${kind} response`, rows: '', replaceKey: 'call_id', columns: [callIdKey] };
  return { kind, match: /$^/, tables: [root], generic: true };
}

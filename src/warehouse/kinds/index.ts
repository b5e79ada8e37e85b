import type { TableSpec } from '../columns.js';
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

const LIFECYCLE = /\/(task_post|tasks_ready|tasks_fixed|webhook_resend)(\/|$)/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DROPPED_SEGMENTS = new Set(['v1', 'v3', 'task_get', 'live', 'advanced']);

/**
 * The kind of a response, from its path: a declared kind, `_calls` for task lifecycle
 * calls, or a generic kind named after the endpoint (`/v3/backlinks/anchors/live` gives
 * `backlinks_anchors`).
 */
export function kindOfPath(path: string): string {
  const p = path.split('?')[0]!;
  const declared = DECLARED_KINDS.find((k) => k.match.test(p));
  if (declared) return declared.kind;
  if (LIFECYCLE.test(p)) return CALLS_KIND;
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

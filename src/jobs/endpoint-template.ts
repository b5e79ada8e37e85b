import { ENDPOINTS, type Endpoint } from '../catalog/index.js';

/** Endpoints a generic job may buy from: anything that creates a task or answers live under `/v3`. */
export const JOB_ENDPOINTS: readonly Endpoint[] = ENDPOINTS.filter(
  (e) => e.api !== 'v1' && (e.mode === 'task_post' || e.mode === 'live') && e.body === 'tasks',
);

/** Placeholders a template's string values may hold. */
export const PLACEHOLDERS = ['{keyword}', '{keywords}', '{target}'] as const;

/** Replaces the placeholders in every string of a template (deeply). */
export function fillTemplate(v: unknown, with_: { keyword?: string; keywords?: string[]; target?: string }): unknown {
  if (v === '{keywords}') return with_.keywords ?? [];
  if (typeof v === 'string') {
    return v.replaceAll('{keyword}', with_.keyword ?? '{keyword}').replaceAll('{target}', with_.target ?? '{target}');
  }
  if (Array.isArray(v)) return v.map((x) => fillTemplate(x, with_));
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fillTemplate(x, with_)]));
  return v;
}

/** The three catalog ids nearest to a mistyped one (edit distance), for the error message. */
export function closestEndpoints(id: string): string[] {
  return JOB_ENDPOINTS.map((e) => ({ id: e.id, d: editDistance(id, e.id) }))
    .sort((a, b) => a.d - b.d)
    .slice(0, 3)
    .map((x) => x.id);
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

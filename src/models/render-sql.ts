/** Values the runner fills into a model's SQL. */
export interface RenderContext {
  /** True when only new rows are built into an existing table. */
  isIncremental?: boolean;
  /** The model's own relation, for `{{ this }}`. */
  self?: string;
  /** SQL literal of the incremental key's last built value, for `{{ incremental_since }}`. */
  incrementalSince?: string;
  /** Keep both branches of every `{% if %}` (for finding dependencies). */
  allBranches?: boolean;
  /** The pass of a model built in slices (sidecar `slices`): `{{ in_slice(...) }}` keeps its rows only. */
  slice?: { index: number; count: number };
}

/** `{{ in_slice(a, b) }}`: the columns whose hash picks a row's slice. */
export const IN_SLICE = /\{\{\s*in_slice\(([^(){}]+)\)\s*\}\}/g;

const IF_BLOCK = /\{%\s*if\s+is_incremental\s*%\}([\s\S]*?)(?:\{%\s*else\s*%\}([\s\S]*?))?\{%\s*endif\s*%\}/g;

/**
 * The small dbt-like template of model SQL: `{% if is_incremental %} ... {% else %} ...
 * {% endif %}`, `{{ this }}`, `{{ incremental_since }}` and `{{ in_slice(columns) }}` (true
 * outside a sliced build; in its k-th of n passes, `hash(columns) % n = k`). Nothing more, on
 * purpose: models stay plain SQL a reader can paste into DuckDB.
 */
export function renderTemplate(sql: string, ctx: RenderContext): string {
  const body = sql.replace(IF_BLOCK, (_m, yes: string, no: string | undefined) => {
    if (ctx.allBranches) return `${yes}\n${no ?? ''}`;
    return ctx.isIncremental ? yes : (no ?? '');
  });
  return body
    .replace(/\{\{\s*this\s*\}\}/g, ctx.self ?? '__this__')
    .replace(/\{\{\s*incremental_since\s*\}\}/g, ctx.incrementalSince ?? 'NULL')
    .replace(IN_SLICE, (_m, cols: string) => (ctx.slice ? `(hash(${cols.trim()}) % ${ctx.slice.count} = ${ctx.slice.index})` : 'true'));
}

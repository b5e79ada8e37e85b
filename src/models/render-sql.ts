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
}

const IF_BLOCK = /\{%\s*if\s+is_incremental\s*%\}([\s\S]*?)(?:\{%\s*else\s*%\}([\s\S]*?))?\{%\s*endif\s*%\}/g;

/**
 * The small dbt-like template of model SQL: `{% if is_incremental %} ... {% else %} ...
 * {% endif %}`, `{{ this }}` and `{{ incremental_since }}`. Nothing more, on purpose:
 * models stay plain SQL a reader can paste into DuckDB.
 */
export function renderTemplate(sql: string, ctx: RenderContext): string {
  const body = sql.replace(IF_BLOCK, (_m, yes: string, no: string | undefined) => {
    if (ctx.allBranches) return `${yes}\n${no ?? ''}`;
    return ctx.isIncremental ? yes : (no ?? '');
  });
  return body
    .replace(/\{\{\s*this\s*\}\}/g, ctx.self ?? '__this__')
    .replace(/\{\{\s*incremental_since\s*\}\}/g, ctx.incrementalSince ?? 'NULL');
}

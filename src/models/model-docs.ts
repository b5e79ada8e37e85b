import { clusterTablesMarkdown } from './clusters/cluster-tables.js';
import type { Model } from './model.js';
import { DEFAULT_SQL_DIR } from './run-models.js';
import { discoverModels } from './discover-models.js';

/** A table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|');
}

/** The columns a model's first `unique` test names: the key of its grain. */
export function modelKeys(m: Model): string[] {
  for (const t of m.sidecar.tests) if ('unique' in t) return t.unique;
  return [];
}

function martSection(m: Model): string {
  const keys = modelKeys(m);
  const lines = [
    `### \`${m.name}\``,
    '',
    `${cell(m.sidecar.grain)}.${keys.length ? ` Key: ${keys.map((k) => `\`${k}\``).join(', ')}.` : ''}`,
  ];
  if (m.sidecar.description) lines.push('', cell(m.sidecar.description));
  const columns = Object.entries(m.sidecar.columns ?? {});
  if (columns.length === 0) return [...lines, '', '(its sidecar documents no columns)', ''].join('\n');
  lines.push('', '| column | type | unit | description |', '|---|---|---|---|');
  for (const [name, c] of columns) {
    const text = c.deprecated ? `**Deprecated:** ${c.deprecated} ${c.description}` : c.description;
    lines.push(`| \`${name}\`${keys.includes(name) ? ' (key)' : ''} | ${cell(c.type)} | ${cell(c.unit ?? '')} | ${cell(text)} |`);
  }
  return [...lines, ''].join('\n');
}

/**
 * The marts section of docs/schema.md, from the sidecars (`sql/marts/*.yml`): each mart's
 * grain and key, description, and every column's type, unit and description.
 */
export function martsMarkdown(models: readonly Model[]): string {
  const marts = models.filter((m) => m.layer === 'marts').sort((a, b) => a.name.localeCompare(b.name));
  return [
    '## Marts',
    '',
    'Built by `pipeline models run` (and each run) from `sql/marts/*.sql`; this section is generated from',
    'their sidecars (`sql/marts/*.yml`). Published as Parquet under `parquet/<mart>/` and as views of',
    '`serving.duckdb`. Units: money in CNY (`_cny`) or USD (`_usd`) as exact `DECIMAL(18,6)`; a',
    '"fraction" is 0 to 1 (0.26 = 26%); `_pct` columns are kept for older readers only where marked',
    "deprecated. `location_code` names a place of the service's locations list: join `locations`.",
    '',
    '### Opening `serving.duckdb` from another folder',
    '',
    'The views read Parquet by absolute paths, the warehouse folder as it was at the last publish, so',
    '`serving.duckdb` opens from any folder with no setting (the `duckdb` shell, DBeaver, Python).',
    '',
    'A folder moved or mounted at another path (a share the BI machine mounts elsewhere) keeps the old',
    'paths until its next publish there (`pipeline run`, or `pipeline models run`), which writes the',
    'new ones; until then the views fail with `No files found that match the pattern "/old/path/…"`.',
    'The same views stand in the schema `relative`, by paths relative to the folder: DuckDB resolves',
    'those against the working folder of the process, then against `file_search_path`. Once per',
    'connection, before the first query (the settings are per connection, not stored in the file):',
    '',
    '```sql',
    "SET file_search_path = '/path/to/warehouse';  -- the folder holding serving.duckdb, where it is now",
    "SET search_path = 'relative,main';            -- plain view names read the relative views",
    '```',
    '',
    'The catalog says the same: `SELECT open_with, folder FROM published` (the statements for the folder',
    "it was published in, and that folder) and each view's comment (`SELECT schema_name, view_name,",
    'comment FROM duckdb_views()`).',
    "A lake copy's `serving.duckdb` has only relative views, over `parquet/…` under the copied prefix: start",
    "the reader in that folder, or run `SET file_search_path = '/path/to/lake'` first.",
    '',
    ...marts.map(martSection),
    clusterTablesMarkdown(),
  ].join('\n');
}

/** The marts section for the models under `sqlDir` (default: the tool's `sql/`). */
export async function martsMarkdownOf(sqlDir: string = DEFAULT_SQL_DIR): Promise<string> {
  return martsMarkdown(await discoverModels(sqlDir));
}

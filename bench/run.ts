// `npm run bench [-- --tasks N]`: loads the same SERP task_get bodies into serp_items by
// two paths, side by side in one process, and prints rows/s and their ratio:
//   arrow  the foundation's path: JSON.parse → normalizeSerpTasks (Arrow) → data chunks → DuckDB
//   sql    DuckDB flattens the landed gzip NDJSON itself: read_json + from_json + unnest
// Figures, not assertions: tests check behaviour, this prints what it costs.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { envelopeSchema } from '../src/client/index.js';
import { buildSerpResult } from '../src/sandbox/serp-result.js';
import { loadIdempotent, normalizeSerpTasks, serpItemsTable, serpResultsTable, Warehouse } from '../src/warehouse/index.js';

const arg = process.argv.indexOf('--tasks');
const TASKS = arg > 0 ? Number(process.argv[arg + 1]) : 400;
const at = new Date('2026-11-20T09:00:00Z');

function body(i: number): string {
  const params = { keyword: `keyword ${i} running shoes`, location_code: 2840, language_code: 'en', device: 'desktop' as const, depth: 100 };
  const result = buildSerpResult({ seed: 1, engine: 'engA', params, at });
  const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  return JSON.stringify({
    version: '0.1', status_code: 20000, status_message: 'Ok.', time: '0.01 sec.', cost: 0, tasks_count: 1, tasks_error: 0,
    tasks: [{ id, status_code: 20000, status_message: 'Ok.', cost: 0, result_count: 1, path: [], data: { se: 'engA', se_type: 'organic', ...params }, result: [result] }],
  });
}

async function arrowPath(dir: string, bodies: string[]): Promise<number> {
  const wh = await Warehouse.open(dir);
  try {
    let rows = 0;
    const t0 = performance.now();
    // Groups of 50 tasks per transaction, as the pull collector loads them.
    for (let g = 0; g < bodies.length; g += 50) {
      const tasks = bodies.slice(g, g + 50).map((b) => envelopeSchema.parse(JSON.parse(b)).tasks![0]!);
      const { results, items } = normalizeSerpTasks(tasks, { runId: 'bench' });
      await loadIdempotent(wh, [{ spec: serpResultsTable, table: results }, { spec: serpItemsTable, table: items }], async () => {});
      rows += items.numRows;
    }
    const secs = (performance.now() - t0) / 1000;
    return rows / secs;
  } finally {
    wh.close();
  }
}

async function sqlPath(dir: string, file: string): Promise<{ rate: number; rows: number }> {
  const wh = await Warehouse.open(dir);
  try {
    const t0 = performance.now();
    await wh.run(`
      INSERT INTO serp_items BY NAME
      WITH env AS (
        SELECT from_json(body, '{"tasks":[{"id":"VARCHAR","result":[{"datetime":"VARCHAR","items":["JSON"]}]}]}') AS e
        FROM read_json('${file}', columns = {body: 'VARCHAR'}, format = 'newline_delimited')
      ),
      t AS (SELECT unnest(e.tasks) AS t FROM env),
      r AS (SELECT t.id AS task_id, unnest(t.result) AS r, generate_subscripts(t.result, 1) - 1 AS result_index FROM t),
      i AS (SELECT task_id, result_index, strptime(r.datetime, '%Y-%m-%d %H:%M:%S %z')::DATE AS check_date,
                   unnest(r.items) AS j, generate_subscripts(r.items, 1) - 1 AS item_index FROM r)
      SELECT task_id, result_index, item_index, check_date,
             j->>'type' AS type, (j->>'rank_group')::INT AS rank_group, (j->>'rank_absolute')::INT AS rank_absolute,
             j->>'position' AS position, j->>'domain' AS domain, j->>'title' AS title, j->>'url' AS url,
             j->>'breadcrumb' AS breadcrumb, j->>'website_name' AS website_name, j->>'description' AS description,
             (j->>'is_featured_snippet')::BOOLEAN AS is_featured_snippet, (j->>'is_image')::BOOLEAN AS is_image,
             (j->>'is_video')::BOOLEAN AS is_video, (j->'rating'->>'value')::DOUBLE AS rating_value,
             (j->'rating'->>'votes_count')::BIGINT AS rating_votes_count, j->>'xpath' AS xpath, j AS extra
      FROM i`);
    const secs = (performance.now() - t0) / 1000;
    const [{ n }] = (await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM serp_items`)) as [{ n: number }];
    return { rate: n / secs, rows: n };
  } finally {
    wh.close();
  }
}

const root = await mkdtemp(join(tmpdir(), 'pipeline-bench-'));
try {
  const bodies = Array.from({ length: TASKS }, (_, i) => body(i));
  const file = join(root, 'landed.ndjson.gz');
  await writeFile(file, gzipSync(bodies.map((b) => JSON.stringify({ body: b })).join('\n') + '\n'));
  const arrow = await arrowPath(join(root, 'a'), bodies);
  const sql = await sqlPath(join(root, 'b'), file);
  const items = sql.rows;
  console.log(`serp_items load, ${TASKS} task_get bodies, ${items} item rows (Node ${process.version})`);
  console.log(`  arrow (JS normalizer → Arrow → DuckDB chunks, 50 tasks a transaction)  ${Math.round(arrow).toLocaleString('en-US')} rows/s  ratio ${(arrow / sql.rate).toFixed(2)}`);
  console.log(`  sql   (DuckDB read_json + from_json + unnest over the landed NDJSON)     ${Math.round(sql.rate).toLocaleString('en-US')} rows/s  ratio 1.00`);
} finally {
  await rm(root, { recursive: true, force: true });
}

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compactRaw, exportParquet, loadLanded, type Warehouse } from '../../../src/warehouse/index.js';
import { compactFixture, land, response, tempWarehouse } from './helpers.js';

// Bodies the service may send on a later night, unlike the ones before it: a field of another
// type than the columns stored for it, lists that are not lists, JSON that is not an answer, a
// lone surrogate, an empty file. Each night must load what it can, and say what it could not.

const TASK = (n: number) => `11111111-2222-4333-8444-${String(n).padStart(12, '0')}`;
const SERP = (n: number) => `/v3/serp/engA/organic/task_get/advanced/${TASK(n)}`;

/** The small SERP fixture as task `n`, checked on day `day` of November 2026, edited by `edit`. */
async function serpBody(n: number, day: number, edit?: (items: any[], env: any) => void): Promise<string> {
  const env = JSON.parse(await compactFixture('serp.task_get.advanced.small.json'));
  env.tasks[0].id = TASK(n);
  env.tasks[0].result[0].datetime = `2026-11-${day} 08:00:00 +00:00`;
  edit?.(env.tasks[0].result[0].items, env);
  return JSON.stringify(env);
}

/** Lands and loads one night's bodies (task number, body), received on day `day`. */
async function night(wh: Warehouse, day: number, bodies: [number, string][]) {
  const ids = await land(wh, ...bodies.map(([n, b]) => response(SERP(n), b, { receivedAt: new Date(`2026-11-${day}T09:00:00Z`) })));
  return loadLanded(wh, { callIds: ids });
}

describe('bodies unlike the nights before them (real DuckDB in a temp folder)', () => {
  let wh: Warehouse;
  let dir: string;
  let done: () => Promise<void>;
  beforeEach(async () => ({ wh, dir, done } = await tempWarehouse()));
  afterEach(async () => done());

  it('loads a night whose field is a string where earlier nights had an object, and the night after with the object again', async () => {
    await night(wh, 20, [[1, await serpBody(1, 20, (items) => ((items[0].rating = { rating_type: 'Max5', value: 4.5 }), (items[0].badge = { label: 'new' })))]]);
    const second = await night(wh, 21, [[2, await serpBody(2, 21, (items) => ((items[0].rating = '4.5 of 5'), (items[0].badge = 'new')))]]);
    expect(second.rows.get('serp_items')).toBe(3);
    await night(wh, 22, [[3, await serpBody(3, 22, (items) => ((items[0].rating = { rating_type: 'Max10', value: 9 }), (items[0].badge = { label: 'old' })))]]);
    const rows = await wh.all(
      `SELECT check_date::VARCHAR AS d, rating_type, rating_value, rating, badge__label, badge, badge__v FROM serp_items WHERE item_index = 0 ORDER BY d`,
    );
    expect(rows).toEqual([
      { d: '2026-11-20', rating_type: 'Max5', rating_value: 4.5, rating: null, badge__label: 'new', badge: null, badge__v: null },
      // The string goes to a column of its own, the object's columns stay empty. Another item of
      // the night has a rating object, so that column is JSON; the badge's is text.
      { d: '2026-11-21', rating_type: null, rating_value: null, rating: '"4.5 of 5"', badge__label: null, badge: 'new', badge__v: null },
      // The object again: its fields in their columns, as text (not JSON); the object itself in the
      // JSON column, and in the variant of the text column.
      { d: '2026-11-22', rating_type: 'Max10', rating_value: 9, rating: '{"rating_type":"Max10","value":9}', badge__label: 'old', badge: null, badge__v: '{"label":"old"}' },
    ]);
  });

  it('dates a result whose datetime is missing or no time by the day it was received, keeping an odd value in the variant column', async () => {
    await night(wh, 20, [[1, await serpBody(1, 20)]]);
    await night(wh, 21, [[2, await serpBody(2, 21, (_items, env) => (env.tasks[0].result[0].datetime = 1795251600))]]);
    await night(wh, 22, [[3, await serpBody(3, 22, (_items, env) => delete env.tasks[0].result[0].datetime)]]);
    const results = await wh.all(`SELECT check_date::VARCHAR AS d, check_date__v AS v FROM serp_results ORDER BY d`);
    expect(results).toEqual([
      { d: '2026-11-20', v: null },
      { d: '2026-11-21', v: '1795251600' },
      { d: '2026-11-22', v: null },
    ]);
    const items = await wh.all(`SELECT check_date::VARCHAR AS d, count(*)::INT AS n FROM serp_items GROUP BY ALL ORDER BY d`);
    expect(items.map((r: any) => r.d)).toEqual(['2026-11-20', '2026-11-21', '2026-11-22']);
  });

  it('loads a night whose list of objects (a child table) is an object or a string, giving the child table no rows for it', async () => {
    await night(wh, 20, [[1, await serpBody(1, 20, (items) => (items[0].sitelinks = [{ title: 'a' }, { title: 'b' }]))]]);
    expect(await wh.all(`SELECT sitelinks_index, title FROM serp_items__sitelinks ORDER BY ALL`)).toEqual([
      { sitelinks_index: 0, title: 'a' },
      { sitelinks_index: 1, title: 'b' },
    ]);
    const second = await night(wh, 21, [
      [2, await serpBody(2, 21, (items) => ((items[0].sitelinks = { title: 'c' }), (items[1].sitelinks = [{ title: 'd' }])))],
      [3, await serpBody(3, 21, (items) => (items[0].sitelinks = 'none'))],
    ]);
    expect(second.rows.get('serp_items')).toBe(6);
    expect(await wh.all(`SELECT task_id, item_index, sitelinks_index, title FROM serp_items__sitelinks ORDER BY ALL`)).toEqual([
      { task_id: TASK(1), item_index: 0, sitelinks_index: 0, title: 'a' },
      { task_id: TASK(1), item_index: 0, sitelinks_index: 1, title: 'b' },
      { task_id: TASK(2), item_index: 1, sitelinks_index: 0, title: 'd' },
    ]);
    // No table took the list's field as a column: it would hold every later night's lists as JSON.
    const cols = await wh.all<{ c: string }>(`SELECT column_name AS c FROM duckdb_columns() WHERE table_name = 'serp_items' AND column_name LIKE 'sitelinks%'`);
    expect(cols).toEqual([]);
  });

  it('loads the other bodies of a night when one holds its items as an object, or strings among them', async () => {
    const report = await night(wh, 21, [
      [1, await serpBody(1, 21, (_items, env) => (env.tasks[0].result[0].items = { type: 'organic', url: 'https://x' }))],
      [2, await serpBody(2, 21, (items) => items.splice(1, 0, 'an ad'))],
      [3, await serpBody(3, 21)],
    ]);
    expect(report.skippedFiles).toEqual([]);
    // Task 2 keeps its three objects at their own indexes (the string at index 1 is no row); task 1 gives none.
    expect(await wh.all(`SELECT task_id, list(item_index ORDER BY item_index) AS idx, list(type ORDER BY item_index) AS types FROM serp_items GROUP BY task_id ORDER BY task_id`)).toEqual([
      { task_id: TASK(2), idx: [0, 2, 3], types: ['featured_snippet', 'organic', 'people_also_ask'] },
      { task_id: TASK(3), idx: [0, 1, 2], types: ['featured_snippet', 'organic', 'people_also_ask'] },
    ]);
    expect(await wh.all(`SELECT task_id FROM serp_results ORDER BY ALL`)).toEqual([{ task_id: TASK(1) }, { task_id: TASK(2) }, { task_id: TASK(3) }]);
  });

  it('reads an ISO 8601 check time as well as the service\'s, and an integer beyond INTEGER as null, loading the night', async () => {
    const report = await night(wh, 21, [
      [1, await serpBody(1, 21, (_items, env) => (env.tasks[0].result[0].datetime = '2026-11-21T23:30:00-05:00'))],
      [2, await serpBody(2, 21, (items) => (items[0].rank_absolute = 3_000_000_000))],
    ]);
    expect(report.skippedFiles).toEqual([]);
    expect(await wh.all(`SELECT task_id, checked_at::VARCHAR AS t, check_date::VARCHAR AS d FROM serp_results ORDER BY ALL`)).toEqual([
      { task_id: TASK(1), t: '2026-11-22 04:30:00+00', d: '2026-11-22' },
      { task_id: TASK(2), t: '2026-11-21 08:00:00+00', d: '2026-11-21' },
    ]);
    expect(await wh.all(`SELECT task_id, rank_absolute FROM serp_items WHERE item_index = 0 ORDER BY ALL`)).toEqual([
      { task_id: TASK(1), rank_absolute: 1 },
      { task_id: TASK(2), rank_absolute: null },
    ]);
  });

  it('keeps JSON that is not an object at a path of results as a malformed body, and loads the others', async () => {
    const ids = await land(wh, response(SERP(1), '42'), response(SERP(2), '["not", "an", "answer"]'), response(SERP(3), await serpBody(3, 20)));
    await compactRaw(wh);
    const report = await loadLanded(wh, { all: true });
    expect(report.skippedFiles).toEqual([]);
    expect(report.rows.get('serp_items')).toBe(3);
    const index = await wh.all<{ call_id: string; kind: string; parsed: boolean }>(`SELECT call_id, kind, parsed FROM raw_responses`);
    expect(Object.fromEntries(index.map((r) => [r.call_id, [r.kind, r.parsed]]))).toEqual({
      [ids[0]!]: ['_malformed', false],
      [ids[1]!]: ['_malformed', false],
      [ids[2]!]: ['serp', true],
    });
  });

  it('lands a lone surrogate as U+FFFD, keeps the bytes received, and loads the segment that holds it', async () => {
    const bad = await serpBody(1, 20, (items) => (items[0].title = 'x\ud800y'));
    expect(bad).toContain('\\ud800');
    const [id] = await land(wh, response(SERP(1), bad), response(SERP(2), await serpBody(2, 20)));
    await compactRaw(wh);
    const report = await loadLanded(wh, { all: true });
    expect(report.skippedFiles).toEqual([]);
    expect(await wh.all(`SELECT task_id, title FROM serp_items WHERE item_index = 0 ORDER BY task_id`)).toEqual([
      { task_id: TASK(1), title: 'x\ufffdy' },
      { task_id: TASK(2), title: 'Best trail shoes' },
    ]);
    // The landed line keeps the body as received, byte for byte, beside the one DuckDB reads.
    const [{ file, off }] = (await wh.all<{ file: string; off: bigint }>(`SELECT file, byte_offset AS off FROM raw_responses WHERE call_id = $1`, [id!])) as [{ file: string; off: bigint }];
    const lines = gunzipSync((await readFile(join(dir, file))).subarray(Number(off))).toString('utf8').split('\n');
    expect(JSON.parse(lines[0]!).body_text).toBe(bad);
  });

  it('keeps odd Unicode as received, a leading U+FEFF included, in the tables and their Parquet', async () => {
    // Compared in SQL, so that what DuckDB holds is checked apart from the read-out into
    // JavaScript (src/warehouse/duckdb-text.ts).
    const odd = ['\ufeffBest trail shoes', '\ufeff\ufeffdouble', 'RTL \u200f\u05e9\u05dc\u05d5\u05dd', 'e\u0301te\u0301 👟', 'zero\u200bwidth\u2028line'];
    await night(wh, 20, [[1, await serpBody(1, 20, (items) => odd.forEach((t, i) => (items[i] = { ...items[0], title: t })))]]);
    const kept = (rows: { i: number; same: boolean; n: number }[]) => expect(rows).toEqual(odd.map((t, i) => ({ i, same: true, n: [...t].length })));
    const checks = odd.map((_, i) => `SELECT ${i} AS i, title = $${i + 1} AS same, length(title)::INT AS n FROM %s WHERE item_index = ${i}`).join(' UNION ALL ');
    kept(await wh.all(`${checks.replaceAll('%s', 'serp_items')} ORDER BY i`, odd));
    await exportParquet(wh, { tables: ['serp_items'] });
    const parquet = `read_parquet('${join(dir, 'parquet', 'serp_items', '**', '*.parquet')}')`;
    kept(await wh.all(`${checks.replaceAll('%s', parquet)} ORDER BY i`, odd));
  });

  it('skips an empty landed file with a message, and loads the others', async () => {
    const ids = await land(wh, response(SERP(1), await serpBody(1, 20)), response(SERP(2), await serpBody(2, 20)));
    const [{ file }] = (await wh.all<{ file: string }>(`SELECT file FROM raw_responses WHERE call_id = $1`, [ids[0]!])) as [{ file: string }];
    await writeFile(join(dir, file), Buffer.alloc(0));
    const report = await loadLanded(wh, { callIds: ids });
    expect(report.skippedFiles).toEqual([{ file, error: 'the file is empty (0 bytes)' }]);
    expect(await wh.all(`SELECT DISTINCT task_id FROM serp_items`)).toEqual([{ task_id: TASK(2) }]);
  });
});

import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { headOf, loadLanded, reindexRaw, type Warehouse } from '../../../src/warehouse/index.js';
import { compactFixture, land, response, tempWarehouse } from './helpers.js';

const serpPath = (id: string) => `/v3/serp/engA/organic/task_get/advanced/${id}`;

/** A body of the published shapes fixture under a task id of its own, with its keyword (and more) edited. */
async function publishedShapes(id: string, edit: (result: any) => void = () => {}): Promise<string> {
  const env = JSON.parse(await compactFixture('serp.task_get.advanced.published-shapes.json'));
  env.tasks[0].id = id;
  env.tasks[0].path = serpPath(id).split('/').filter(Boolean);
  edit(env.tasks[0].result[0]);
  return JSON.stringify(env);
}

/** The bodies of the sandbox night's 24 landed answers (engA, engB, engC at depth 10). */
async function nightBodies(): Promise<{ path: string; body: string }[]> {
  const text = gunzipSync(await readFile(new URL('../../fixtures/raw/night-serp-answers.ndjson.gz', import.meta.url))).toString('utf8');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { path: string; body: unknown })
    .map((l) => ({ path: l.path, body: JSON.stringify(l.body) }));
}

/** A `/v3` answer of an endpoint with no declared schema, whose results hold lists of every sort. */
function genericBody(id: string): string {
  const items = Array.from({ length: 40 }, (_, k) => ({ type: 'anchor', anchor: `anchor ${k} – «${'ü'.repeat(k % 5)}»`, rank: k, backlinks: k * 3 }));
  return JSON.stringify({
    version: '0.1',
    status_code: 20000,
    status_message: 'Ok.',
    tasks_count: 1,
    tasks: [
      {
        id,
        status_code: 20000,
        status_message: 'Ok.',
        cost: 0.02,
        result_count: 1,
        data: { api: 'backlinks', function: 'anchors', target: 'example.com' },
        result: [
          {
            target: 'example.com',
            total_count: 40,
            items_count: 40,
            // A list of scalars and objects both, and lists the heads keep.
            mixed: [1, { a: 2 }, 'three'],
            tags: ['x', 'y'],
            counts: [1, 2, 3],
            empty: [],
            nested: { list: [{ b: 1 }] },
            items,
          },
        ],
      },
    ],
  });
}

/** Every row of every data table the load filled, in one comparable value. */
async function dataTables(wh: Warehouse): Promise<Record<string, unknown[]>> {
  const names = (await wh.all<{ t: string }>(`SELECT DISTINCT table_name AS t FROM schema_columns ORDER BY 1`)).map((r) => r.t);
  const out: Record<string, unknown[]> = {};
  for (const t of names) out[t] = await wh.all(`SELECT * FROM "${t}" ORDER BY ALL`);
  return out;
}

describe('result-level rows from the landed heads (raw_heads)', () => {
  let a: { wh: Warehouse; dir: string; done: () => Promise<void> };
  let b: { wh: Warehouse; dir: string; done: () => Promise<void> };
  beforeEach(async () => {
    a = await tempWarehouse();
    b = await tempWarehouse();
  });
  afterEach(async () => {
    await a.done();
    await b.done();
  });

  it('keeps a body without the lists of objects of its results, and nothing when there are none or the head is not small', () => {
    const body = {
      tasks: [{ id: 't', result: [{ keyword: 'k', items: [{ x: 1 }], mixed: [1, { a: 1 }], tags: ['a'], chips: { items: [{ y: 2 }] }, ['__proto__']: [{ z: 1 }], long: 'x'.repeat(10) }] }],
    };
    const text = JSON.stringify(body);
    const head = JSON.parse(headOf(JSON.parse(text), 10_000)!);
    expect(head.tasks[0].result[0]).toEqual({ keyword: 'k', tags: ['a'], chips: { items: [{ y: 2 }] }, long: 'x'.repeat(10) });
    expect(Object.keys(head.tasks[0].result[0])).not.toContain('__proto__');
    expect(head.tasks[0].id).toBe('t');
    // A key named __proto__ that is kept stays a key, as JSON.parse made it.
    const proto = JSON.parse(headOf(JSON.parse('{"tasks":[{"result":[{"__proto__":{"p":1},"items":[{"x":1}]}]}]}'), 10_000)!);
    expect(Object.hasOwn(proto.tasks[0].result[0], '__proto__')).toBe(true);
    expect(headOf({ tasks: [{ result: [{ keyword: 'k', tags: ['a'] }] }] }, 10_000)).toBeNull();
    expect(headOf({ status_code: 20000 }, 10_000)).toBeNull();
    expect(headOf(JSON.parse(text), text.length)).toBeNull();
  });

  it('gives the rows a full parse of the bodies gives: published shapes, odd Unicode, a night of real answers, lists of every sort', async () => {
    const odd = ['running shoes “best” 👟', 'حذاء رياضي', 'Straße\u2028zeile', 'back\\slash "quoted"', 'e\u0301te\u0301'];
    const responses = [
      ...(await Promise.all(odd.map(async (k, i) => response(serpPath(`0000000${i}-2222-4333-8444-555555555555`), await publishedShapes(`0000000${i}-2222-4333-8444-555555555555`, (r) => (r.keyword = k)))))),
      ...(await nightBodies()).map((n) => response(n.path, n.body)),
      response('/v3/backlinks/anchors/live', genericBody('10000000-2222-4333-8444-555555555555')),
    ];
    await land(a.wh, ...responses);
    const [{ heads }] = (await a.wh.all<{ heads: number }>(`SELECT count(*)::INT AS heads FROM raw_heads`)) as [{ heads: number }];
    expect(heads).toBe(responses.length);
    // The same files, indexed from the files alone: no heads, every table parses the bodies.
    await cp(join(a.dir, 'raw'), join(b.dir, 'raw'), { recursive: true });
    await reindexRaw(b.wh);
    expect(await b.wh.all(`SELECT * FROM raw_heads`)).toEqual([]);

    const fromHeads = await loadLanded(a.wh, { all: true });
    const parsed = await loadLanded(b.wh, { all: true });
    expect(fromHeads.rows).toEqual(parsed.rows);
    expect(fromHeads.rows.get('serp_results')).toBe(odd.length + 24);
    const tables = await dataTables(a.wh);
    expect(Object.keys(tables)).toEqual(expect.arrayContaining(['serp_results', 'serp_items', 'backlinks_anchors']));
    expect(tables).toEqual(await dataTables(b.wh));
    expect((await a.wh.all<{ k: string }>(`SELECT keyword AS k FROM serp_results WHERE task_id LIKE '0000000%' ORDER BY task_id`)).map((r) => r.k)).toEqual(odd);
  });

  it('reads the result-level rows from the heads when every body of the files has one, and from the bodies when one has none', async () => {
    const ids = ['20000000-2222-4333-8444-555555555555', '20000001-2222-4333-8444-555555555555'];
    const [first, second] = await land(a.wh, ...(await Promise.all(ids.map(async (id) => response(serpPath(id), await publishedShapes(id, (r) => (r.keyword = 'as landed')))))));
    // A head that says something else than its body shows which one the load read.
    await a.wh.run(`UPDATE raw_heads SET head = replace(head, '"keyword":"as landed"', '"keyword":"from the head"') WHERE call_id = $1`, [first!]);
    await loadLanded(a.wh, { all: true });
    expect(await a.wh.all(`SELECT keyword FROM serp_results ORDER BY task_id`)).toEqual([{ keyword: 'from the head' }, { keyword: 'as landed' }]);
    // One body of the files without a head: the bodies are parsed again, for all of them.
    await a.wh.run(`DELETE FROM raw_heads WHERE call_id = $1`, [second!]);
    await loadLanded(a.wh, { all: true });
    expect(await a.wh.all(`SELECT keyword FROM serp_results ORDER BY task_id`)).toEqual([{ keyword: 'as landed' }, { keyword: 'as landed' }]);
  });
});

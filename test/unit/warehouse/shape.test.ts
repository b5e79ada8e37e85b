import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadLanded, mergeShapes, shapeOf, type Warehouse } from '../../../src/warehouse/index.js';
import { land, response, tempWarehouse } from './helpers.js';

describe('body shapes', () => {
  it('lists every path with its JSON types, lists as []', () => {
    expect(shapeOf({ a: 1, b: [{ c: 'x' }, { c: null, d: 2.5 }], e: { f: true } })).toEqual(
      ['a:i', 'b:a', 'b[]:o', 'b[].c:n', 'b[].c:s', 'b[].d:f', 'e:o', 'e.f:b'].sort(),
    );
    expect(mergeShapes(['a:i', 'a:s', 'b:n']).get('a')).toEqual(new Set(['i', 's']));
  });

  it('marks values below the depth cap as whole JSON', () => {
    expect(shapeOf({ a: { b: { c: { d: 1 } } } }, 2)).toEqual(['a:o', 'a.b:o', 'a.b.c:j'].sort());
  });
});

describe('generic normalizer depth cap (real DuckDB)', () => {
  let wh: Warehouse;
  let done: () => Promise<void>;
  beforeEach(async () => ({ wh, done } = await tempWarehouse()));
  afterEach(async () => done());

  it('keeps an object nested past the cap whole in a JSON column', async () => {
    let deep: unknown = { leaf: 'bottom' };
    for (let i = 0; i < 12; i++) deep = { x: deep };
    const body = JSON.stringify({ status_code: 20000, tasks: [{ id: 't-1', status_code: 20000, result: [{ name: 'n', deep }] }] });
    await loadLanded(wh, { callIds: await land(wh, response('/v3/content_analysis/search/live', body)) });
    const cols = await wh.all<{ c: string; t: string }>(
      `SELECT column_name AS c, data_type AS t FROM information_schema.columns WHERE table_name = 'content_analysis_search' ORDER BY ordinal_position`,
    );
    const capped = cols.find((c) => c.t === 'JSON');
    expect(capped?.c).toBe(`deep__${Array(8).fill('x').join('__')}`);
    const [row] = await wh.all<Record<string, unknown>>(`SELECT name, "${capped!.c}"->>'$.x.x.x.x.leaf' AS leaf FROM content_analysis_search`);
    expect(row).toEqual({ name: 'n', leaf: 'bottom' });
  });
});

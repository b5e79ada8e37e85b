import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cachedEmbeddingKeys, embedWithCache } from '../../../src/models/clusters/embedding-cache.js';
import type { Warehouse } from '../../../src/warehouse/index.js';
import { tempWarehouse } from './helpers.js';

// @duckdb/node-api hands text to JavaScript through a TextDecoder that, by default, drops a
// leading U+FEFF (src/warehouse/duckdb-text.ts). DuckDB keeps it, so a value read back missed
// what had been written.
describe('text read out of DuckDB keeps a leading U+FEFF', () => {
  let wh: Warehouse;
  let done: () => Promise<void>;
  beforeEach(async () => ({ wh, done } = await tempWarehouse()));
  afterEach(async () => done());

  it('reads back what was written, through the warehouse and any other connection of the process', async () => {
    const texts = ['\ufeffshoes', '\ufeff\ufeff', '\ufeff', 'mid\ufeffdle', 'plain'];
    await wh.run(`CREATE TABLE t (i INT, v VARCHAR)`);
    for (const [i, v] of texts.entries()) await wh.run(`INSERT INTO t VALUES (?, ?)`, [i, v]);
    expect((await wh.all<{ v: string }>(`SELECT v FROM t ORDER BY i`)).map((r) => r.v)).toEqual(texts);
    expect(await wh.all(`SELECT chr(65279) || 'x' AS v, [chr(65279) || 'y'] AS l, {s: chr(65279) || 'z'} AS s`)).toEqual([
      { v: '\ufeffx', l: ['\ufeffy'], s: { s: '\ufeffz' } },
    ]);
    const instance = await DuckDBInstance.create(':memory:');
    const other = await instance.connect();
    try {
      expect((await other.runAndReadAll(`SELECT chr(65279) || 'w' AS v`)).getRowObjectsJS()).toEqual([{ v: '\ufeffw' }]);
    } finally {
      other.closeSync();
      instance.closeSync();
    }
  });

  it('finds a keyword that begins with U+FEFF in the embeddings cache, and does not buy it again', async () => {
    const bought: string[] = [];
    const opts = {
      model: 'm',
      dimensions: 2,
      embed: (texts: string[]) => {
        bought.push(...texts);
        return texts.map(() => Float32Array.from([0.5, 0.25]));
      },
    };
    const keywords = ['\ufeffrunning shoes', 'trail shoes'];
    expect(await embedWithCache(wh, keywords, opts)).toMatchObject({ cached: 0, embedded: 2, calls: 1 });
    const again = await embedWithCache(wh, keywords, opts);
    expect(again).toMatchObject({ cached: 2, embedded: 0, calls: 0 });
    expect([...again.vectors.keys()].sort()).toEqual([...keywords].sort());
    expect(bought).toEqual(keywords);
    // The plan's estimate reads the same cache.
    expect((await cachedEmbeddingKeys(wh)).get('m\u00002')).toEqual(new Set(keywords));
  });
});

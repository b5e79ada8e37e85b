import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { adjustedRandIndex, CLUSTER_TABLES, clusterKeywords } from '../../src/models/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { localEmbed, TOPIC_KEYWORDS } from '../fixtures/models/local-embed.js';
import { insertPages } from '../fixtures/models/serp-pages.js';
import { tempDir } from './helpers.js';

const ALL = Object.values(TOPIC_KEYWORDS).flat();
const topicOf = new Map(Object.entries(TOPIC_KEYWORDS).flatMap(([t, ks]) => ks.map((k) => [k, t] as const)));

describe('clusterKeywords over the warehouse, with the local embedding test double', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let wh: Warehouse;
  let embedCalls: string[][];
  let labelCalls: string[][];
  const embed = (dims: number) => {
    const inner = localEmbed(dims);
    return async (texts: string[]) => {
      embedCalls.push(texts);
      return inner(texts);
    };
  };
  const label = async (keywords: string[]) => {
    labelCalls.push(keywords);
    return `about ${topicOf.get(keywords[0]!)}`;
  };

  beforeEach(async () => {
    tmp = await tempDir('pipeline-models-clusters-');
    wh = await Warehouse.open(tmp.dir);
    embedCalls = [];
    labelCalls = [];
    // Collected keywords: the SERP keywords (mixed case, as typed) and a search_volume table.
    await insertPages(
      wh,
      ALL.slice(0, 20).map((k, i) => ({ keyword: i % 2 ? k.toUpperCase() : k, date: '2026-01-01', items: [] })),
    );
    for (const [i, k] of ALL.entries()) {
      await wh.run(
        `insert into search_volume (task_id, result_index, keyword, location_code, language_code, search_volume) values (?, 0, ?, 2840, 'en', ?)`,
        [`t${i}`, k, 100 + i],
      );
    }
    await wh.run(
      `insert into search_volume (task_id, result_index, keyword, location_code, language_code, search_volume) values ('tx', 0, 'best running shoes', 2826, 'en', 5000)`,
    );
  });
  afterEach(async () => {
    wh.close();
    await tmp.cleanup();
  });

  it('writes each table exactly as its declaration (the one docs/schema.md is generated from) says: names, types, order', async () => {
    await clusterKeywords(wh, { model: 'text-embedding-3-small', dimensions: 64, embed: embed(64), label, batchSize: 50 });
    for (const t of CLUSTER_TABLES) {
      const cols = await wh.all<{ column_name: string; column_type: string; null: string }>(`describe ${t.name}`);
      expect(
        cols.map((c) => [c.column_name, c.column_type, c.null]),
        t.name,
      ).toEqual(t.columns.map((c) => [c.name, c.type, c.notNull ? 'NO' : 'YES']));
    }
  });

  it('clusters every collected keyword by topic, one row each, with representative, size, volume and label', async () => {
    const res = await clusterKeywords(wh, { model: 'text-embedding-3-small', dimensions: 256, embed: embed(256), label, batchSize: 10 });
    expect(res).toMatchObject({ keywords: 32, clusters: 4, embeddedNow: 32, fromCache: 0, embedCalls: 4, labelCalls: 4 });
    expect(embedCalls.map((b) => b.length)).toEqual([10, 10, 10, 2]);
    const rows = await wh.all<{ keyword: string; cluster_id: number; distance_to_centroid: number; similarity_to_centroid: number }>(
      `select * from keyword_clusters order by keyword`,
    );
    expect(rows.map((r) => r.keyword)).toEqual([...ALL].sort());
    expect(
      adjustedRandIndex(
        rows.map((r) => topicOf.get(r.keyword)!),
        rows.map((r) => r.cluster_id),
      ),
    ).toBeGreaterThanOrEqual(0.9);
    for (const r of rows) {
      expect(r.distance_to_centroid).toBeCloseTo(1 - r.similarity_to_centroid, 12);
      expect(r.distance_to_centroid).toBeGreaterThanOrEqual(-1e-12);
    }
    const summary = await wh.all<{ cluster_id: number; representative_keyword: string; size: number; total_volume: bigint; label: string }>(
      `select * from keyword_cluster_summary order by cluster_id`,
    );
    expect(summary).toHaveLength(4);
    for (const s of summary) {
      const members = rows.filter((r) => r.cluster_id === s.cluster_id);
      expect(s.size).toBe(members.length);
      // The representative is the member closest to the centroid.
      const closest = members.reduce((a, b) => (b.distance_to_centroid < a.distance_to_centroid ? b : a));
      expect(s.representative_keyword).toBe(closest.keyword);
      // Total volume: per keyword, each location's volume; "best running shoes" adds its UK 5000.
      const expected = members.reduce((t, m) => t + 100 + ALL.indexOf(m.keyword) + (m.keyword === 'best running shoes' ? 5000 : 0), 0);
      expect(s.total_volume).toBe(BigInt(expected));
      expect(s.label).toBe(`about ${topicOf.get(s.representative_keyword)}`);
    }
  });

  it('embeds a keyword once per model and dimensions, and labels a cluster once', async () => {
    await clusterKeywords(wh, { model: 'text-embedding-3-small', dimensions: 256, embed: embed(256), label });
    embedCalls = [];
    labelCalls = [];
    const again = await clusterKeywords(wh, { model: 'text-embedding-3-small', dimensions: 256, embed: embed(256), label });
    expect(again).toMatchObject({ embeddedNow: 0, fromCache: 32, embedCalls: 0, labelCalls: 0, clusters: 4 });
    expect(embedCalls).toEqual([]);
    expect(labelCalls).toEqual([]);
    const other = await clusterKeywords(wh, { model: 'text-embedding-3-small', dimensions: 128, embed: embed(128), label });
    expect(other).toMatchObject({ embeddedNow: 32, fromCache: 0 });
    const [stored] = await wh.all<{ n: number; d: number }>(
      `select count(*)::int as n, count(distinct dimensions)::int as d from keyword_embeddings`,
    );
    expect(stored).toEqual({ n: 64, d: 2 });
    const [width] = await wh.all<{ len: number }>(
      `select len(embedding)::int as len from keyword_embeddings where dimensions = 128 limit 1`,
    );
    expect(width!.len).toBe(128);
  });

  it('keeps the batches already embedded when a later batch comes back wrong', async () => {
    const good = localEmbed(64);
    let call = 0;
    const flaky = async (texts: string[]) => (++call === 2 ? good(texts).slice(1) : good(texts));
    await expect(clusterKeywords(wh, { model: 'm', dimensions: 64, embed: flaky, batchSize: 10 })).rejects.toThrow(
      /returned 9 vectors for 10 texts/,
    );
    const [kept] = await wh.all<{ n: number }>(`select count(*)::int as n from keyword_embeddings`);
    expect(kept!.n).toBe(10);
  });
});

import { createHash } from 'node:crypto';
import type { Warehouse } from '../../warehouse/index.js';
import { listRelations } from '../relation-info.js';
import { chooseClusters } from './choose-clusters.js';
import { createTableSql, KEYWORD_CLUSTER_LABELS, KEYWORD_CLUSTER_SUMMARY, KEYWORD_CLUSTERS } from './cluster-tables.js';
import { embedWithCache, type EmbedOptions } from './embedding-cache.js';
import { similarityMatrix } from './similarity-matrix.js';
import { dot, unit } from './vectors.js';

/** Names a cluster from its keywords: in production one `chat5.6-luna` call; passed in. */
export type LabelFn = (keywords: string[]) => Promise<string> | string;

export interface ClusterKeywordsOptions extends EmbedOptions {
  label?: LabelFn;
  /** Part of the label cache key (default `chat5.6-luna`). */
  labelModel?: string;
  /** Keywords to cluster; default every collected keyword (serp_results, search_volume). */
  keywords?: readonly string[];
  seed?: number;
  maxK?: number;
}

export interface ClusterKeywordsResult {
  keywords: number;
  clusters: number;
  silhouette: number;
  embeddedNow: number;
  fromCache: number;
  embedCalls: number;
  labelCalls: number;
}

/** Unit-length mean direction of each cluster. */
export function clusterCentroids(points: readonly Float64Array[], assignment: Int32Array, k: number): Float64Array[] {
  const dims = points[0]?.length ?? 0;
  const sums = Array.from({ length: k }, () => new Float64Array(dims));
  points.forEach((p, i) => {
    const s = sums[assignment[i]!]!;
    for (let j = 0; j < dims; j++) s[j]! += p[j]!;
  });
  return sums.map(unit);
}

async function collectedKeywords(wh: Warehouse): Promise<string[]> {
  const rel = await listRelations(wh);
  const parts = ['select lower(trim(keyword)) as k from serp_results'];
  if (rel.has('search_volume')) parts.push('select lower(trim(keyword)) from search_volume');
  const rows = await wh.all<{ k: string }>(
    `select distinct k from (${parts.join(' union all ')}) where k is not null and k <> '' order by k`,
  );
  return rows.map((r) => r.k);
}

async function keywordVolumes(wh: Warehouse): Promise<Map<string, number> | undefined> {
  if (!(await listRelations(wh)).has('search_volume')) return undefined;
  const rows = await wh.all<{ k: string; v: number }>(
    `select k, sum(v)::double as v from (
       select lower(trim(keyword)) as k, location_code, max(search_volume) as v from search_volume group by all
     ) group by k`,
  );
  return new Map(rows.map((r) => [r.k, Number(r.v)]));
}

async function labelFor(
  wh: Warehouse,
  members: string[],
  model: string,
  label: LabelFn | undefined,
  now: () => Date,
): Promise<{ text: string | null; called: boolean }> {
  if (!label) return { text: null, called: false };
  await wh.run(createTableSql(KEYWORD_CLUSTER_LABELS, 'if not exists'));
  const hash = createHash('sha256')
    .update([...members].sort().join('\n'))
    .digest('hex');
  const [hit] = await wh.all<{ label: string }>(`select label from keyword_cluster_labels where label_model = ? and member_hash = ?`, [
    model,
    hash,
  ]);
  if (hit) return { text: hit.label, called: false };
  const text = await label(members);
  await wh.run(`insert into keyword_cluster_labels values (?, ?, ?, ?::timestamptz)`, [model, hash, text, now().toISOString()]);
  return { text, called: true };
}

/**
 * Keyword clusters: embeds every collected keyword once (cached by model, dimensions and
 * text), groups them by cosine similarity with the number of clusters chosen by
 * silhouette, and writes `keyword_clusters` (one row per keyword: cluster, similarity and
 * distance to the centroid) and `keyword_cluster_summary` (per cluster: representative
 * keyword, size, total volume, label). A label is asked for once per new set of members.
 */
export async function clusterKeywords(wh: Warehouse, opts: ClusterKeywordsOptions): Promise<ClusterKeywordsResult> {
  const now = opts.now ?? (() => new Date());
  const keywords = opts.keywords ? [...new Set(opts.keywords.map((k) => k.trim().toLowerCase()))].sort() : await collectedKeywords(wh);
  const emb = await embedWithCache(wh, keywords, opts);
  const points = keywords.map((k) => unit(emb.vectors.get(k)!));
  const base = { keywords: keywords.length, embeddedNow: emb.embedded, fromCache: emb.cached, embedCalls: emb.calls };
  if (keywords.length < 2) return { ...base, clusters: keywords.length, silhouette: 0, labelCalls: 0 };
  const c = chooseClusters(similarityMatrix(points), { seed: opts.seed ?? 1, maxK: opts.maxK });
  const volumes = await keywordVolumes(wh);

  const centroids = clusterCentroids(points, c.assignment, c.k);
  const groups = Array.from({ length: c.k }, () => ({ members: [] as { keyword: string; sim: number }[] }));
  keywords.forEach((k, i) => groups[c.assignment[i]!]!.members.push({ keyword: k, sim: dot(points[i]!, centroids[c.assignment[i]!]!) }));
  const ordered = groups
    .filter((g) => g.members.length > 0)
    .map((g) => ({ ...g, members: g.members.sort((a, b) => b.sim - a.sim || a.keyword.localeCompare(b.keyword)) }))
    .sort((a, b) => b.members.length - a.members.length || a.members[0]!.keyword.localeCompare(b.members[0]!.keyword));

  let labelCalls = 0;
  const labels: (string | null)[] = [];
  for (const g of ordered) {
    const l = await labelFor(
      wh,
      g.members.map((m) => m.keyword),
      opts.labelModel ?? 'chat5.6-luna',
      opts.label,
      now,
    );
    labels.push(l.text);
    if (l.called) labelCalls++;
  }

  await wh.transaction(async () => {
    await wh.run(createTableSql(KEYWORD_CLUSTERS, 'replace'));
    await wh.run(createTableSql(KEYWORD_CLUSTER_SUMMARY, 'replace'));
    for (const [i, g] of ordered.entries()) {
      for (const [j, m] of g.members.entries()) {
        await wh.run(`insert into keyword_clusters values (?, ?, ?, ?, ?, ?, ?)`, [
          m.keyword,
          i + 1,
          m.sim,
          1 - m.sim,
          j === 0,
          opts.model,
          opts.dimensions,
        ]);
      }
      const total = volumes ? g.members.reduce((s, m) => s + (volumes.get(m.keyword) ?? 0), 0) : null;
      const mean = g.members.reduce((s, m) => s + m.sim, 0) / g.members.length;
      await wh.run(`insert into keyword_cluster_summary values (?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
        i + 1,
        g.members[0]!.keyword,
        g.members.length,
        total === null ? null : BigInt(Math.round(total)),
        labels[i] ?? null,
        mean,
        c.silhouette,
        opts.model,
        opts.dimensions,
      ]);
    }
  });
  return { ...base, clusters: ordered.length, silhouette: c.silhouette, labelCalls };
}

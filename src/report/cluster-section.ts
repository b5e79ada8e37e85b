import { listRelations } from '../models/index.js';
import type { ClusterSection } from './payload.js';
import { project2d } from './pca.js';
import { round, type ReportContext } from './report-context.js';

/** Longest cluster label shown; labels are model-written summaries and can run long. */
const LABEL_CHARS = 48;

/**
 * The keyword clusters of `pipeline models cluster` (`keyword_clusters`,
 * `keyword_cluster_summary`) on a 2-D map: the embeddings they were made from
 * (`keyword_embeddings`, same model and dimensions) projected on their first two
 * principal components now, scaled into [-1, 1].
 */
export async function clusterSection(ctx: ReportContext): Promise<ClusterSection | null> {
  const rel = await listRelations(ctx.wh);
  if (!rel.has('keyword_clusters') || !rel.has('keyword_cluster_summary') || !rel.has('keyword_embeddings')) {
    ctx.notes.push('No keyword clusters: run `pipeline models cluster` to add the cluster map.');
    return null;
  }
  const summary = await ctx.wh.all<{
    cluster_id: number;
    representative_keyword: string;
    size: number;
    label: string | null;
    embedding_model: string;
    dimensions: number;
  }>(
    `select cluster_id::int as cluster_id, representative_keyword, size::int as size, label, embedding_model, dimensions::int as dimensions
     from keyword_cluster_summary order by cluster_id`,
  );
  if (summary.length === 0) {
    ctx.notes.push('keyword_cluster_summary is empty: run `pipeline models cluster`.');
    return null;
  }
  const model = summary[0]!.embedding_model;
  const dimensions = summary[0]!.dimensions;
  const rows = await ctx.wh.all<{ keyword: string; cluster_id: number; embedding: number[] }>(
    `select c.keyword, c.cluster_id::int as cluster_id, e.embedding::double[] as embedding
     from keyword_clusters as c
     inner join (
       select keyword, any_value(embedding) as embedding from keyword_embeddings where model = ? and dimensions = ? group by keyword
     ) as e using (keyword)
     order by c.cluster_id, c.keyword`,
    [model, dimensions],
  );
  const xy = project2d(rows.map((r) => r.embedding));
  const scale = Math.max(1e-12, ...xy.map(([x, y]) => Math.max(Math.abs(x), Math.abs(y))));
  const clusterIndex = new Map(summary.map((s, i) => [s.cluster_id, i]));
  const scoped = Boolean(ctx.scope.pipelines?.length);
  const points: ClusterSection['points'] = [];
  rows.forEach((r, i) => {
    // Limited to some pipelines: only the keywords those pipelines collected.
    if (scoped && ctx.keywords.find(r.keyword) === undefined) return;
    const ci = clusterIndex.get(r.cluster_id);
    if (ci === undefined) return;
    points.push([ctx.keyword(r.keyword), round(xy[i]![0] / scale, 3), round(xy[i]![1] / scale, 3), ci]);
  });
  if (rows.length < (await ctx.wh.all<{ n: number }>('select count(*)::int as n from keyword_clusters'))[0]!.n) {
    ctx.notes.push(`Some clustered keywords have no ${model}/${dimensions} embedding and are left off the map.`);
  }
  const clusters = summary.map((s) => {
    const text = (s.label ?? s.representative_keyword).replace(/\s+/g, ' ').trim();
    return {
      id: s.cluster_id,
      label: text.length > LABEL_CHARS ? `${text.slice(0, LABEL_CHARS - 1)}…` : text,
      representative: s.representative_keyword,
      size: s.size,
    };
  });
  return { model, dimensions, clusters, points };
}

import { silhouetteScore } from './silhouette.js';
import type { SimilarityMatrix } from './similarity-matrix.js';
import { sphericalKMeans, type Clustering, type KMeansOptions } from './spherical-kmeans.js';

export interface ChosenClustering extends Clustering {
  silhouette: number;
  /** Silhouette of every k tried, for reports. */
  tried: { k: number; silhouette: number }[];
}

/**
 * Clusters with the number of clusters chosen from the data: every k from 2 to `maxK`
 * (default √(2n), at most 60) is tried and the highest mean silhouette wins. When even the
 * best silhouette is below `minSilhouette` (default 0.1), the data have no real groups
 * and one cluster is returned.
 */
export function chooseClusters(
  sim: SimilarityMatrix,
  opts: KMeansOptions & { maxK?: number; minSilhouette?: number } = {},
): ChosenClustering {
  const n = sim.n;
  const maxK = Math.min(opts.maxK ?? Math.min(60, Math.max(2, Math.ceil(Math.sqrt(2 * n)))), n - 1);
  const tried: { k: number; silhouette: number }[] = [];
  let best: ChosenClustering | undefined;
  for (let k = 2; k <= maxK; k++) {
    const c = sphericalKMeans(sim, k, opts);
    const silhouette = silhouetteScore(sim, c.assignment, c.k);
    tried.push({ k: c.k, silhouette });
    if (!best || silhouette > best.silhouette + 1e-9) best = { ...c, silhouette, tried };
  }
  if (!best || best.silhouette < (opts.minSilhouette ?? 0.1)) {
    return { ...sphericalKMeans(sim, 1, opts), silhouette: 0, tried };
  }
  return best;
}

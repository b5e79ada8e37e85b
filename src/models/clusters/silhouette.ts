import type { SimilarityMatrix } from './similarity-matrix.js';

/**
 * Mean silhouette of a partition under cosine distance (1 - cosine), in [-1, 1]: how much
 * closer each point is to its own cluster than to the nearest other one. Used to choose
 * the number of clusters from the data. A point alone in its cluster scores 0.
 */
export function silhouetteScore(sim: SimilarityMatrix, assignment: Int32Array, k: number): number {
  const { n, values } = sim;
  if (k < 2 || n < 3) return 0;
  const counts = new Int32Array(k);
  for (let j = 0; j < n; j++) counts[assignment[j]!]!++;
  const sums = new Float64Array(k);
  let total = 0;
  for (let i = 0; i < n; i++) {
    sums.fill(0);
    const row = i * n;
    for (let j = 0; j < n; j++) if (j !== i) sums[assignment[j]!]! += 1 - values[row + j]!;
    const own = assignment[i]!;
    if (counts[own]! <= 1) continue;
    const a = sums[own]! / (counts[own]! - 1);
    let b = Infinity;
    for (let c = 0; c < k; c++) if (c !== own && counts[c]! > 0) b = Math.min(b, sums[c]! / counts[c]!);
    if (b !== Infinity) total += (b - a) / Math.max(a, b, 1e-12);
  }
  return total / n;
}

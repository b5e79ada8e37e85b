import { dot } from './vectors.js';

/** Pairwise cosine similarities of unit vectors, row-major n×n. */
export interface SimilarityMatrix {
  n: number;
  values: Float32Array;
}

/**
 * Every pairwise cosine similarity, computed once so that trying many cluster counts
 * costs n² per k-means round whatever the embedding width (1536 dimensions would
 * otherwise dominate). Memory is 4·n² bytes: about 64 MB at 4,000 keywords.
 */
export function similarityMatrix(points: readonly Float64Array[]): SimilarityMatrix {
  const n = points.length;
  const values = new Float32Array(n * n);
  for (let i = 0; i < n; i++) {
    values[i * n + i] = 1;
    for (let j = i + 1; j < n; j++) {
      const s = dot(points[i]!, points[j]!);
      values[i * n + j] = s;
      values[j * n + i] = s;
    }
  }
  return { n, values };
}

import type { SimilarityMatrix } from './similarity-matrix.js';
import { seededRandom } from './vectors.js';

/** A partition of n unit vectors into k groups. */
export interface Clustering {
  k: number;
  /** Cluster index (0..k-1) of each point. */
  assignment: Int32Array;
  /** Sum over points of (1 - cosine to own centroid); lower is tighter. */
  cost: number;
}

export interface KMeansOptions {
  seed?: number;
  /** Independent starts; the lowest-cost one wins (default 4). */
  restarts?: number;
  maxIterations?: number;
}

function seedAssignment(sim: SimilarityMatrix, k: number, rand: () => number): Int32Array {
  // k-means++ with cosine distance: spread the starting centres out, then assign to nearest.
  const { n, values } = sim;
  const centres = [Math.floor(rand() * n)];
  const d = new Float64Array(n).fill(Infinity);
  while (centres.length < k) {
    const last = centres[centres.length - 1]!;
    let total = 0;
    for (let i = 0; i < n; i++) {
      d[i] = Math.min(d[i]!, Math.max(0, 1 - values[i * n + last]!));
      total += d[i]!;
    }
    let pick = Math.floor(rand() * n);
    if (total > 0) {
      let r = rand() * total;
      for (let i = 0; i < n; i++) {
        r -= d[i]!;
        if (r <= 0) {
          pick = i;
          break;
        }
      }
    }
    centres.push(pick);
  }
  const assignment = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    let best = 0;
    for (let c = 1; c < k; c++) if (values[i * n + centres[c]!]! > values[i * n + centres[best]!]!) best = c;
    assignment[i] = best;
  }
  return assignment;
}

function once(sim: SimilarityMatrix, k: number, rand: () => number, maxIterations: number): Clustering {
  const { n, values } = sim;
  let assignment = seedAssignment(sim, k, rand);
  const acc = new Float64Array(n * k); // acc[i*k+c] = Σ_{j∈c} sim(i, j)
  const norm = new Float64Array(k); // |Σ_{j∈c} x_j|
  let cost = 0;
  for (let iter = 0; iter <= maxIterations; iter++) {
    acc.fill(0);
    for (let i = 0; i < n; i++) {
      const row = i * n;
      const out = i * k;
      for (let j = 0; j < n; j++) acc[out + assignment[j]!]! += values[row + j]!;
    }
    norm.fill(0);
    for (let j = 0; j < n; j++) norm[assignment[j]!]! += acc[j * k + assignment[j]!]!;
    for (let c = 0; c < k; c++) norm[c] = Math.sqrt(Math.max(norm[c]!, 0));
    // cos(x_i, centroid_c) = Σ_{j∈c} sim(i,j) / |Σ_{j∈c} x_j|
    cost = 0;
    const next = new Int32Array(n);
    let moved = 0;
    for (let i = 0; i < n; i++) {
      cost += 1 - (norm[assignment[i]!]! > 0 ? acc[i * k + assignment[i]!]! / norm[assignment[i]!]! : 0);
      let best = assignment[i]!;
      let bestSim = norm[best]! > 0 ? acc[i * k + best]! / norm[best]! : -Infinity;
      for (let c = 0; c < k; c++) {
        if (norm[c]! <= 0) continue;
        const s = acc[i * k + c]! / norm[c]!;
        if (s > bestSim + 1e-12) {
          bestSim = s;
          best = c;
        }
      }
      next[i] = best;
      if (best !== assignment[i]) moved++;
    }
    if (moved === 0 || iter === maxIterations) break;
    assignment = next;
  }
  return { k, assignment: compact(assignment, k), cost };
}

/** Renumbers clusters 0..m-1 in order of first appearance, dropping emptied ones. */
function compact(assignment: Int32Array, k: number): Int32Array {
  const map = new Int32Array(k).fill(-1);
  let next = 0;
  return assignment.map((c) => (map[c] === -1 ? (map[c] = next++) : map[c]!));
}

/**
 * Spherical k-means: k-means on unit vectors where closeness is cosine similarity, the
 * measure embeddings are made for, run on the precomputed similarity matrix. Seeded
 * k-means++ starts and restarts: the same input and seed give the same clusters.
 */
export function sphericalKMeans(sim: SimilarityMatrix, k: number, opts: KMeansOptions = {}): Clustering {
  if (sim.n === 0) throw new Error('sphericalKMeans needs at least one point');
  const kk = Math.max(1, Math.min(k, sim.n));
  const rand = seededRandom(opts.seed ?? 1);
  let best: Clustering | undefined;
  for (let r = 0; r < (opts.restarts ?? 4); r++) {
    const c = once(sim, kk, rand, opts.maxIterations ?? 50);
    if (!best || c.cost < best.cost - 1e-9) best = c;
  }
  const used = Math.max(...best!.assignment) + 1;
  return { ...best!, k: used };
}

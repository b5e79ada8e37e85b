import { describe, expect, it } from 'vitest';
import {
  adjustedRandIndex,
  chooseClusters,
  seededRandom,
  silhouetteScore,
  similarityMatrix,
  sphericalKMeans,
  unit,
} from '../../../src/models/index.js';
import { localEmbed, TOPIC_KEYWORDS } from '../../fixtures/models/local-embed.js';

/** Points scattered around `groups` random directions in 16 dimensions. */
function blobs(groups: number, perGroup: number, spread: number, seed: number): { points: Float64Array[]; truth: number[] } {
  const rand = seededRandom(seed);
  const centres = Array.from({ length: groups }, () => unit(Array.from({ length: 16 }, () => rand() * 2 - 1)));
  const points: Float64Array[] = [];
  const truth: number[] = [];
  centres.forEach((c, g) => {
    for (let i = 0; i < perGroup; i++) {
      points.push(unit(Array.from(c, (x) => x + (rand() * 2 - 1) * spread)));
      truth.push(g);
    }
  });
  return { points, truth };
}

describe('adjustedRandIndex', () => {
  it('is 1 for the same partition under other names and matches the textbook value for a split cluster', () => {
    expect(adjustedRandIndex([0, 0, 1, 1, 2], ['b', 'b', 'a', 'a', 'c'])).toBe(1);
    // scikit-learn's documented example: adjusted_rand_score([0, 0, 1, 1], [0, 0, 1, 2]) = 0.5714...
    expect(adjustedRandIndex([0, 0, 1, 1], [0, 0, 1, 2])).toBeCloseTo(4 / 7, 12);
    expect(adjustedRandIndex([0, 0, 0, 0], [0, 1, 2, 3])).toBe(0);
  });
});

describe('silhouette and the choice of k', () => {
  it('scores well-separated groups near 1 and a random split near 0', () => {
    const { points, truth } = blobs(3, 20, 0.15, 7);
    const sim = similarityMatrix(points);
    expect(silhouetteScore(sim, Int32Array.from(truth), 3)).toBeGreaterThan(0.7);
    const rand = seededRandom(3);
    const shuffled = Int32Array.from(truth.map(() => Math.floor(rand() * 3)));
    expect(Math.abs(silhouetteScore(sim, shuffled, 3))).toBeLessThan(0.1);
  });

  it('finds the number of groups from the data and recovers them', () => {
    for (const groups of [2, 3, 5]) {
      const { points, truth } = blobs(groups, 15, 0.2, 11 + groups);
      const c = chooseClusters(similarityMatrix(points), { seed: 1 });
      expect(c.k).toBe(groups);
      expect(adjustedRandIndex(truth, Array.from(c.assignment))).toBe(1);
    }
  });

  it('returns one cluster when the points have no groups', () => {
    const rand = seededRandom(5);
    const points = Array.from({ length: 40 }, () => unit(Array.from({ length: 64 }, () => rand() * 2 - 1)));
    expect(chooseClusters(similarityMatrix(points)).k).toBe(1);
  });

  it('gives the same clusters for the same seed', () => {
    const { points } = blobs(4, 10, 0.4, 21);
    const sim = similarityMatrix(points);
    expect(Array.from(sphericalKMeans(sim, 4, { seed: 9 }).assignment)).toEqual(
      Array.from(sphericalKMeans(sim, 4, { seed: 9 }).assignment),
    );
  });

  it('recovers keyword topics from the local test-double embeddings with ARI >= 0.9', () => {
    const keywords = Object.values(TOPIC_KEYWORDS).flat();
    const truth = Object.entries(TOPIC_KEYWORDS).flatMap(([topic, ks]) => ks.map(() => topic));
    const points = localEmbed(256)(keywords).map(unit);
    const c = chooseClusters(similarityMatrix(points), { seed: 1 });
    expect(c.k).toBe(4);
    expect(adjustedRandIndex(truth, Array.from(c.assignment))).toBeGreaterThanOrEqual(0.9);
  });
});

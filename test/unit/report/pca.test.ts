import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { project2d } from '../../../src/report/pca.js';

const dist = (a: readonly number[], b: readonly number[]) => Math.hypot(...a.map((x, i) => x - b[i]!));

describe('project2d', () => {
  it('keeps every distance of points that lie on a plane (or a line) in 6-D', () => {
    // An orthonormal pair u, v and an offset: x = offset + a u + b v, with a spread wider than b.
    const u = [1, 1, 0, 0, 1, 1].map((x) => x / 2);
    const v = [1, -1, 1, -1, 0, 0].map((x) => x / 2);
    const offset = [3, -1, 2, 0, 5, 1];
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.double({ min: -10, max: 10, noNaN: true }), fc.double({ min: -1, max: 1, noNaN: true })), {
          minLength: 3,
          maxLength: 40,
        }),
        (ab) => {
          const points = ab.map(([a, b]) => offset.map((o, i) => o + a * u[i]! + b * v[i]!));
          const xy = project2d(points);
          // Variance below 1e-12 of the total is dropped as rounding noise: at most ~1e-4 of distance here.
          for (let i = 0; i < points.length; i++) {
            for (let j = i + 1; j < points.length; j++)
              expect(Math.abs(dist(xy[i]!, xy[j]!) - dist(points[i]!, points[j]!))).toBeLessThan(1e-3);
          }
        },
      ),
      { numRuns: 50 },
    );
  });

  it('puts the widest spread on the first axis', () => {
    const points = Array.from({ length: 50 }, (_, i) => [Math.cos(i) * 5, Math.sin(i), 0.1 * Math.cos(3 * i)]);
    const xy = project2d(points);
    const spread = (k: 0 | 1) => xy.reduce((s, p) => s + p[k] ** 2, 0);
    const meanX = points.reduce((s, p) => s + p[0]!, 0) / points.length;
    const first = points.reduce((s, p) => s + (p[0]! - meanX) ** 2, 0);
    expect(spread(0)).toBeGreaterThan(4 * spread(1));
    expect(spread(0)).toBeGreaterThanOrEqual(first - 1e-6);
  });

  it('gives the same map for the same vectors, centred on the origin', () => {
    const points = Array.from({ length: 30 }, (_, i) =>
      Array.from({ length: 16 }, (_, j) => Math.sin(i * 1.7 + j * 0.3) + (j === i % 4 ? 2 : 0)),
    );
    const a = project2d(points);
    expect(project2d(points)).toEqual(a);
    expect(Math.abs(a.reduce((s, p) => s + p[0], 0))).toBeLessThan(1e-9);
    expect(Math.abs(a.reduce((s, p) => s + p[1], 0))).toBeLessThan(1e-9);
  });

  it('handles no points, one point and identical points', () => {
    expect(project2d([])).toEqual([]);
    expect(project2d([[1, 2, 3]])).toEqual([[0, 0]]);
    expect(
      project2d([
        [1, 2],
        [1, 2],
      ]),
    ).toEqual([
      [0, 0],
      [0, 0],
    ]);
  });
});

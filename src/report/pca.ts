/**
 * The first two principal components of a set of vectors, by power iteration on the
 * covariance matrix with deflation: enough for a 2-D map of keyword embeddings (a few
 * thousand vectors of a few hundred dimensions) without a linear-algebra dependency.
 * Deterministic: a fixed start vector, and each axis's sign chosen so that its largest
 * loading is positive, so the same embeddings always give the same map.
 */
export function project2d(vectors: readonly ArrayLike<number>[], iterations = 200): [number, number][] {
  const n = vectors.length;
  const dims = vectors[0]?.length ?? 0;
  if (n === 0) return [];
  const mean = new Float64Array(dims);
  for (const v of vectors) for (let j = 0; j < dims; j++) mean[j]! += v[j]! / n;
  const centred = vectors.map((v) => Float64Array.from({ length: dims }, (_, j) => v[j]! - mean[j]!));
  const cov = new Float64Array(dims * dims);
  for (const x of centred) {
    for (let a = 0; a < dims; a++) {
      const xa = x[a]!;
      if (xa === 0) continue;
      const row = a * dims;
      for (let b = a; b < dims; b++) cov[row + b]! += xa * x[b]!;
    }
  }
  for (let a = 0; a < dims; a++) for (let b = 0; b < a; b++) cov[a * dims + b] = cov[b * dims + a]!;
  let trace = 0;
  for (let a = 0; a < dims; a++) trace += cov[a * dims + a]!;
  const axes: Float64Array[] = [];
  for (let c = 0; c < 2; c++) axes.push(powerIteration(cov, dims, axes, iterations, trace * 1e-12));
  return centred.map((x) => [dotArr(x, axes[0]!), dotArr(x, axes[1]!)]);
}

/**
 * The leading eigenvector of `cov` orthogonal to `found`, or a zero vector when what is
 * left has no variance (below `floor`): rounding noise must not pass for a direction.
 */
function powerIteration(cov: Float64Array, dims: number, found: readonly Float64Array[], iterations: number, floor: number): Float64Array {
  let v = Float64Array.from({ length: dims }, (_, j) => 1 + ((j * 7919) % 13) / 13);
  orthogonalise(v, found);
  normalise(v);
  for (let it = 0; it < iterations; it++) {
    const next = new Float64Array(dims);
    for (let a = 0; a < dims; a++) {
      let s = 0;
      const row = a * dims;
      for (let b = 0; b < dims; b++) s += cov[row + b]! * v[b]!;
      next[a] = s;
    }
    orthogonalise(next, found);
    if (!(normalise(next) > floor)) return new Float64Array(dims);
    const delta = next.reduce((m, x, j) => Math.max(m, Math.abs(x - v[j]!)), 0);
    v = next;
    if (delta < 1e-10) break;
  }
  let big = 0;
  for (let j = 1; j < dims; j++) if (Math.abs(v[j]!) > Math.abs(v[big]!)) big = j;
  if (v[big]! < 0) for (let j = 0; j < dims; j++) v[j] = -v[j]!;
  return v;
}

function orthogonalise(v: Float64Array, against: readonly Float64Array[]): void {
  for (const u of against) {
    const d = dotArr(v, u);
    for (let j = 0; j < v.length; j++) v[j]! -= d * u[j]!;
  }
}

function normalise(v: Float64Array): number {
  const norm = Math.sqrt(dotArr(v, v));
  if (norm > 0) for (let j = 0; j < v.length; j++) v[j]! /= norm;
  return norm;
}

function dotArr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

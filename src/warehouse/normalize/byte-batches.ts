/**
 * Consecutive runs of `xs` of at most `max` bytes in all (a larger one alone), in order:
 * how reindexing and loading read landed files a few at a time, so their memory and scratch
 * space are bounded by a batch (or by one file), not by a night or a history.
 */
export function byteBatches<T extends { size: number }>(xs: readonly T[], max: number): T[][] {
  const out: T[][] = [];
  let cur: T[] = [];
  let bytes = 0;
  for (const x of xs) {
    if (cur.length > 0 && bytes + x.size > max) {
      out.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(x);
    bytes += x.size;
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

const pairs = (x: number) => (x * (x - 1)) / 2;

/**
 * Adjusted Rand index of two labelings of the same items: 1 for identical partitions
 * (whatever the label names), about 0 for chance agreement. Scores clustering against
 * known topics.
 */
export function adjustedRandIndex(a: readonly (string | number)[], b: readonly (string | number)[]): number {
  if (a.length !== b.length) throw new Error(`labelings differ in length: ${a.length} and ${b.length}`);
  const n = a.length;
  const table = new Map<string, number>();
  const rows = new Map<string | number, number>();
  const cols = new Map<string | number, number>();
  for (let i = 0; i < n; i++) {
    const key = `${a[i]}\u0000${b[i]}`;
    table.set(key, (table.get(key) ?? 0) + 1);
    rows.set(a[i]!, (rows.get(a[i]!) ?? 0) + 1);
    cols.set(b[i]!, (cols.get(b[i]!) ?? 0) + 1);
  }
  let index = 0;
  for (const v of table.values()) index += pairs(v);
  let sumA = 0;
  for (const v of rows.values()) sumA += pairs(v);
  let sumB = 0;
  for (const v of cols.values()) sumB += pairs(v);
  const expected = (sumA * sumB) / pairs(n);
  const max = (sumA + sumB) / 2;
  if (max === expected) return 1;
  return (index - expected) / (max - expected);
}

import { describe, expect, it } from 'vitest';
import { fromMicros, toMicros } from '../../../src/post/money.js';

describe('exact CNY arithmetic', () => {
  it('parses charge headers and prints sums without float error', () => {
    const sum = ['0.1', '0.2', '0.0043', '0.0032'].reduce((a, v) => a + toMicros(v), 0n);
    expect(fromMicros(sum)).toBe('0.307500'); // 0.1 + 0.2 in floats is 0.30000000000000004
    expect(fromMicros(toMicros('-1.5'))).toBe('-1.500000');
    expect(toMicros(null)).toBe(0n);
    expect(toMicros(0.0258)).toBe(25_800n);
  });
});

import { describe, expect, it } from 'vitest';
import { createRng, firstDrawAfter, hashParts } from '../../../src/sandbox/prng.js';

describe('the emulator PRNG', () => {
  it('gives with a hashed prefix the same first draw as a generator seeded from all the parts', () => {
    const prefixes: (string | number)[][] = [
      [],
      [1],
      [7, 'rel', 'running shoes'],
      [3, 'day-a', 'kw', '2840', 'en', 'engA', 'mobile', '2026-11-21'],
    ];
    const rests: (string | number)[][] = [['example.com', 0], ['shop.example.org', 3], [0], ['', '']];
    for (const p of prefixes) {
      const draw = firstDrawAfter(...p);
      for (const r of rests) expect(draw(...r)).toBe(createRng(...p, ...r).next());
    }
  });

  it('hashes parts joined with a separator, so moving text between parts changes the hash', () => {
    expect(hashParts('ab', 'c')).not.toBe(hashParts('a', 'bc'));
    expect(hashParts('a', 'b')).toBe(hashParts('a', 'b'));
    // Values of the first version (a join, then one pass): the emulator's data stays the same.
    expect([hashParts(1, 'rel', 'kw'), hashParts(), hashParts('x')]).toEqual([3619030684, 2872998923, 794621484]);
  });
});

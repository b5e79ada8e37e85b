import { describe, expect, it } from 'vitest';
import { renderTable } from '../../../src/cli/render.js';

describe('the aligned table', () => {
  it('pads each column to its widest cell, numbers to the right', () => {
    expect(
      renderTable([
        { endpoint: 'a', cny: '1.5' },
        { endpoint: 'bbbbbbbbbb', cny: '12.25' },
      ]),
    ).toBe(['endpoint      cny', '----------  -----', 'a             1.5', 'bbbbbbbbbb  12.25', ''].join('\n'));
  });

  it("prints a year's ledger: 400,000 rows, more than a call can take as arguments", () => {
    const rows = Array.from({ length: 400_000 }, (_, i) => ({ call: `c${i}`, cny: '0.0006' }));
    const out = renderTable(rows);
    expect(out.split('\n')).toHaveLength(400_003);
    expect(out.split('\n')[2]).toBe('c0       0.0006');
  });
});

import { describe, expect, it } from 'vitest';
import { cnyUnitsToUsdMicros, formatCny, formatUsd, parseCny } from '../../../src/sandbox/money.js';
import { serpTaskPriceUnits } from '../../../src/sandbox/pricing.js';

describe('sandbox money', () => {
  it('parses and formats CNY amounts exactly, in units of 0.0001', () => {
    expect(parseCny('1000.0000')).toBe(10_000_000);
    expect(parseCny('0.5')).toBe(5000);
    expect(parseCny('12')).toBe(120_000);
    expect(formatCny(7)).toBe('0.0007');
    expect(formatCny(10_000_000)).toBe('1000.0000');
    expect(() => parseCny('1.00001')).toThrow(/at most 4 decimals/);
    expect(() => parseCny('-1')).toThrow();
  });

  it('converts CNY to USD at 7.2 with half-up rounding to the micro-dollar', () => {
    expect(cnyUnitsToUsdMicros(72)).toBe(1000); // 0.0072 CNY = 0.001 USD
    expect(cnyUnitsToUsdMicros(43)).toBe(597); // 0.000597222…
    expect(cnyUnitsToUsdMicros(9)).toBe(125);
    expect(formatUsd(597)).toBe('0.000597');
  });

  it('sums 0.0001 ten thousand times without drifting (no floats in sums)', () => {
    let units = 0;
    for (let i = 0; i < 10_000; i++) units += parseCny('0.0001');
    expect(formatCny(units)).toBe('1.0000');
  });
});

describe('sandbox SERP pricing', () => {
  it('covers depth 10 with the base price and adds one block per started 10 results', () => {
    expect(serpTaskPriceUnits({}, 'standard')).toBe(43);
    expect(serpTaskPriceUnits({ depth: 10 }, 'standard')).toBe(43);
    expect(serpTaskPriceUnits({ depth: 11 }, 'standard')).toBe(75);
    expect(serpTaskPriceUnits({ depth: 20 }, 'standard')).toBe(75);
    expect(serpTaskPriceUnits({ depth: 21 }, 'standard')).toBe(107);
    expect(serpTaskPriceUnits({ depth: 700 }, 'standard')).toBe(43 + 69 * 32);
  });

  it('doubles for priority 2 and charges 3.3× for live, rounded to 0.0001', () => {
    expect(serpTaskPriceUnits({ priority: 2 }, 'standard')).toBe(86);
    expect(serpTaskPriceUnits({ priority: 1 }, 'live')).toBe(142); // 141.9
    expect(serpTaskPriceUnits({ depth: 20, priority: 2 }, 'live')).toBe(495); // 150 × 3.3
  });
});

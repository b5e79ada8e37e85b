import { describe, expect, it } from 'vitest';
import { neutralizeCell, renderCsv } from '../../../src/cli/render.js';

describe('CSV cells', () => {
  it('neutralize text that a spreadsheet would run as a formula, and leave plain numbers', () => {
    for (const s of ['=1+1', '+cmd', '-2+3', '@SUM(A1)', '\tx', '\rx']) expect(neutralizeCell(s)).toBe(`'${s}`);
    for (const s of ['-0.0043', '+12', '1e-3', 'oak desk', '']) expect(neutralizeCell(s)).toBe(s);
    expect(renderCsv([{ a: '=HYPERLINK("x")', b: -1.5 }])).toBe(`a,b\n"'=HYPERLINK(""x"")",-1.5\n`);
  });
});

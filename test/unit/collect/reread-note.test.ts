import { describe, expect, it } from 'vitest';
import { rereadNote } from '../../../src/collect/load-landed-tasks.js';

describe('the run note for landed files read again from plain text', () => {
  it('counts each file once, names the first, and says nothing when there is none', () => {
    const note = rereadNote(['raw/d/serp--a.seg-1.ndjson.gz', 'raw/d/serp--b.ndjson.gz', 'raw/d/serp--a.seg-1.ndjson.gz']);
    expect(note).toMatch(/^2 landed file\(s\) gave fewer rows/);
    expect(note).toContain('(first: raw/d/serp--a.seg-1.ndjson.gz)');
    expect(note).toContain('every row is in');
    expect(rereadNote([])).toBe('');
  });
});

import { describe, expect, it } from 'vitest';
import { ON_PAGE_MAX_OFFSET, ON_PAGE_READ_REACH } from '../../../src/catalog/index.js';
import { nextRead, type NextRead } from '../../../src/collect/on-page.js';
import { crawlCapNote } from '../../../src/collect/collectors.js';
import { parsePipeline } from '../../../src/config/index.js';

/**
 * The paging of an on-page read at the sizes the emulator cannot serve (its crawls stop at
 * 1000 pages: 3000 links, 1500 resources): the collector's own `nextRead`, driven by answers
 * of a crawl of `total` items as the service gives them (`items_count`, `total_items_count`).
 */
function readCrawl(total: number, maxItems = ON_PAGE_READ_REACH, pageSize = 1000) {
  const calls: { offset: number; limit: number }[] = [];
  let read = 0;
  let next: NextRead = { offset: 0, limit: Math.min(pageSize, maxItems) };
  while ('offset' in next) {
    calls.push(next);
    if (next.offset > ON_PAGE_MAX_OFFSET) throw new Error(`offset ${next.offset} past the spec's maximum`);
    const got = Math.max(0, Math.min(next.limit, total - next.offset));
    read += got;
    next = nextRead({ read, total, got, asked: next.limit }, maxItems, pageSize);
  }
  return { calls, read, end: next.end };
}

describe('on-page reads go past 20,000 items by offset, to the end or a cap that is said', () => {
  it('a crawl of 50,000 items is read to the end, 1000 at a time, offsets 0 to 49,000', () => {
    const r = readCrawl(50_000);
    expect(r).toMatchObject({ read: 50_000, end: 'all' });
    expect(r.calls).toHaveLength(50);
    expect(r.calls[20]).toEqual({ offset: 20_000, limit: 1000 });
    expect(r.calls.at(-1)).toEqual({ offset: 49_000, limit: 1000 });
  });

  it("a crawl deeper than the service's offset is read to offset 2,000,000 plus one page, and the cap is named", () => {
    const r = readCrawl(2_500_000);
    expect(r).toMatchObject({ read: 2_001_000, end: 'offset_reach' });
    expect(r.calls.at(-1)).toEqual({ offset: ON_PAGE_MAX_OFFSET, limit: 1000 });
    // exactly as deep as the service reaches: the end, not a cap
    expect(readCrawl(ON_PAGE_READ_REACH)).toMatchObject({ read: ON_PAGE_READ_REACH, end: 'all' });
  });

  it("a job's max_items stops the read there (the last page asks only for what is left), and the cap is named", () => {
    const r = readCrawl(30_000, 25_500);
    expect(r).toMatchObject({ read: 25_500, end: 'max_items' });
    expect(r.calls.at(-1)).toEqual({ offset: 25_000, limit: 500 });
    expect(readCrawl(25_500, 25_500)).toMatchObject({ read: 25_500, end: 'all' });
  });

  it('without a total, a short page or an empty one ends the read', () => {
    expect(nextRead({ read: 1500, total: undefined, got: 500, asked: 1000 }, ON_PAGE_READ_REACH, 1000)).toEqual({ end: 'all' });
    expect(nextRead({ read: 1000, total: undefined, got: 0, asked: 1000 }, ON_PAGE_READ_REACH, 1000)).toEqual({ end: 'all' });
    expect(nextRead({ read: 1000, total: undefined, got: 1000, asked: 1000 }, ON_PAGE_READ_REACH, 1000)).toEqual({
      offset: 1000,
      limit: 1000,
    });
  });

  it("the run's note names the crawl, the job, the kind, what was read of how many, and the cap", () => {
    expect(
      crawlCapNote({
        crawl: 'c1',
        job: 'site',
        kind: 'links',
        read: 2_001_000,
        total: 2_500_000,
        why: 'offset_reach',
        maxItems: ON_PAGE_READ_REACH,
      }),
    ).toBe(
      "on-page crawl c1 (job site): read 2001000 of 2500000 links; the service's offset reaches no deeper than 2000000 (search_after_token only 20000), the rest were not read",
    );
    expect(crawlCapNote({ crawl: 'c1', job: 'site', kind: 'pages', read: 25_500, total: 30_000, why: 'max_items', maxItems: 25_500 })).toBe(
      "on-page crawl c1 (job site): read 25500 of 30000 pages; the job's max_items (25500) was reached, the rest were not read",
    );
  });

  it('an on_page job reads everything by default and takes max_items past 20,000, up to the reach of the offset', () => {
    const job = (extra: string) =>
      parsePipeline(`name: s\njobs:\n  - kind: on_page\n    targets: [example.com]\n${extra}`, 'p.yaml', {}).jobs[0] as {
        max_items: number;
      };
    expect(job('').max_items).toBe(ON_PAGE_READ_REACH);
    expect(job('    max_items: 50000\n').max_items).toBe(50_000);
    expect(() => job(`    max_items: ${ON_PAGE_READ_REACH + 1}\n`)).toThrow(/at most 2001000/);
  });
});

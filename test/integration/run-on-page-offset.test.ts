import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline, type RunSummary } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, tempDir } from './helpers.js';

/**
 * Reading a finished crawl by `offset` to its end, and a cap that stops it said in the run's
 * notes, on the emulator. The emulator's crawls stop at 1000 pages (3000 links), short of the
 * 20,000 where `search_after_token` ends: the paging is exercised here with small pages
 * (test/unit/collect/on-page-next-read.test.ts drives it at 50,000 and 2,500,000 items).
 */
const yaml = `name: crawl-offset
jobs:
  - kind: on_page
    name: whole
    targets: [example.com]
    max_crawl_pages: 40
    read: [pages, links]
    page_size: 25
  - kind: on_page
    name: capped
    targets: [shop.example.org]
    max_crawl_pages: 40
    read: [links]
    page_size: 25
    max_items: 70
`;

describe('on-page crawls are read by offset to the end; a max_items cap is said in the notes', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let summary: RunSummary;
  const notes: string[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox({ readyAfterMs: 18_000, timeScale: 60 });
    tmp = await tempDir('pipeline-onpage-offset-');
    summary = await runPipeline({
      pipeline: parsePipeline(yaml, 'c.yaml', {}),
      file: 'c.yaml',
      warehouseDir: tmp.dir,
      baseUrl: sandbox.url,
      apiKey: 'svc_live_testcrawloffset',
      logger: silentLogger,
      pollIntervalMs: 50,
      limits: { windowMs: 1000 },
      models: false,
      onProgress: (e) => {
        if (e.kind === 'note') notes.push(e.text);
      },
    });
  }, 120_000);
  afterAll(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('reads every page and link of the whole crawl, 25 a call, each once', async () => {
    expect(summary.tasks).toMatchObject({ planned: 2, posted: 2, collected: 2, failed: 0 });
    await withWarehouse(tmp.dir, async (wh) => {
      const links = await wh.all<{ host: string; n: number; distinct_links: number }>(
        `SELECT split_part(link_from, '/', 3) AS host, count(*)::INT AS n, count(DISTINCT (link_from, link_to, text))::INT AS distinct_links
         FROM on_page_links GROUP BY ALL ORDER BY host`,
      );
      // 40 pages x 3 links; the capped crawl stops at its max_items
      expect(links).toEqual([
        { host: 'example.com', n: 120, distinct_links: 120 },
        { host: 'shop.example.org', n: 70, distinct_links: 70 },
      ]);
      const [pages] = await wh.all<{ n: number; calls: number }>(
        `SELECT (SELECT count(DISTINCT url) FROM on_page_pages)::INT AS n, (SELECT count(*) FROM on_page_pages_calls)::INT AS calls`,
      );
      expect(pages).toEqual({ n: 40, calls: 2 });
      const calls = await wh.all<{ counts: number[]; total: number }>(
        `SELECT list(items_count ORDER BY items_count DESC) AS counts, max(total_items_count)::INT AS total
         FROM on_page_links_calls GROUP BY crawl_id ORDER BY sum(items_count) DESC`,
      );
      // whole: 5 calls of 25 (the last 20); capped: 25, 25 and the 20 left of its 70
      expect(calls.map((c) => [c.total, [...c.counts]])).toEqual([
        [120, [25, 25, 25, 25, 20]],
        [120, [25, 25, 20]],
      ]);
    });
  });

  it('says the capped crawl was read in part, with its job, kind, counts and the cap; says nothing of the whole one', () => {
    const capped = notes.filter((n) => n.startsWith('on-page crawl'));
    expect(capped).toHaveLength(1);
    expect(capped[0]).toMatch(
      /^on-page crawl [0-9a-f-]{36} \(job capped\): read 70 of 120 links; the job's max_items \(70\) was reached, the rest were not read$/,
    );
  });
});

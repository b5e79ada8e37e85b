import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline, type RunSummary } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, tempDir } from './helpers.js';

const job = (pageSize: number) => `name: crawl-${pageSize}
jobs:
  - kind: on_page
    targets: [example.com, shop.example.org]
    max_crawl_pages: 20
    read: [pages, links]
    page_size: ${pageSize}
`;

describe('on-page crawls: watched with the free resources call, read page by page when finished', () => {
  let sandbox: SandboxHandle;
  const tmp: Array<{ dir: string; cleanup: () => Promise<void> }> = [];
  const summaries: RunSummary[] = [];

  beforeAll(async () => {
    // Crawls take a while on the emulator's clock: the collector must wait for "finished".
    // The emulator's minute is one second here (time scale 60), so the on-page family's 30
    // calls a minute do not slow the test; the crawl still takes 300 ms to finish.
    sandbox = await startSandbox({ readyAfterMs: 18_000, timeScale: 60 });
    for (const size of [1000, 6]) {
      const t = await tempDir('pipeline-onpage-');
      tmp.push(t);
      summaries.push(
        await runPipeline({
          pipeline: parsePipeline(job(size), 'c.yaml', {}),
          file: 'c.yaml',
          warehouseDir: t.dir,
          baseUrl: sandbox.url,
          apiKey: 'svc_live_testcrawl',
          logger: silentLogger,
          pollIntervalMs: 50,
          limits: { windowMs: 1000 },
        }),
      );
    }
  }, 120_000);
  afterAll(async () => {
    await sandbox.close();
    for (const t of tmp) await t.cleanup();
  });

  it('collects both crawls once they are finished, and reads every page, link and resource', async () => {
    for (const s of summaries) expect(s.tasks).toMatchObject({ planned: 2, posted: 2, collected: 2, failed: 0 });
    await withWarehouse(tmp[0]!.dir, async (wh) => {
      const [p] = await wh.all<{ pages: number; crawls: number; dupes: number }>(
        `SELECT count(*)::INT AS pages, count(DISTINCT crawl_id)::INT AS crawls, (count(*) - count(DISTINCT (crawl_id, url)))::INT AS dupes FROM on_page_pages`,
      );
      expect(p).toEqual({ pages: 40, crawls: 2, dupes: 0 });
      // Every read happened after the crawl had finished.
      const progress = await wh.all<{ p: string }>(`SELECT DISTINCT crawl_progress AS p FROM on_page_pages_calls`);
      expect(progress).toEqual([{ p: 'finished' }]);
    });
  });

  it('reading 6 items a call (by offset) gives the same rows as reading 1000 at once', async () => {
    const rows = async (dir: string) =>
      withWarehouse(dir, async (wh) => ({
        pages: await wh.all(`SELECT url FROM on_page_pages ORDER BY url`),
        links: await wh.all(`SELECT link_from, link_to FROM on_page_links ORDER BY ALL`),
        calls: (await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM on_page_pages_calls`))[0]!.n,
      }));
    const big = await rows(tmp[0]!.dir);
    const small = await rows(tmp[1]!.dir);
    expect(small.pages).toEqual(big.pages);
    expect(small.links).toEqual(big.links);
    expect(big.calls).toBe(2);
    expect(small.calls).toBe(2 * Math.ceil(20 / 6));
    expect(small.links.length).toBeGreaterThan(20);
  });

  it('each crawl task records the rows loaded from its reads', async () => {
    await withWarehouse(tmp[0]!.dir, async (wh) => {
      const tasks = await wh.all<{ rows_loaded: number }>(`SELECT rows_loaded FROM tasks ORDER BY tag`);
      for (const t of tasks) expect(t.rows_loaded).toBeGreaterThan(20);
    });
  });
});

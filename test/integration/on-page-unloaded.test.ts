import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { endpoint } from '../../src/catalog/index.js';
import { ServiceClient } from '../../src/client/index.js';
import { collectOnPage } from '../../src/collect/on-page.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { RawLanding, RunStore, Warehouse } from '../../src/warehouse/index.js';
import { tearRawFile } from '../unit/warehouse/helpers.js';
import { tempDir } from './helpers.js';

describe('on-page: a crawl whose read answer landed but cannot be loaded', () => {
  let sandbox: SandboxHandle;
  let t: { dir: string; cleanup: () => Promise<void> };
  let wh: Warehouse;
  beforeEach(async () => {
    sandbox = await startSandbox({ timeScale: 60 });
    t = await tempDir('pipeline-onpage-torn-');
    wh = await Warehouse.open(t.dir);
  });
  afterEach(async () => {
    wh.close();
    await sandbox.close();
    await t.cleanup();
  });

  /** Posts one crawl and collects it; the landed file of its `pages` read is torn when `tear`. */
  async function crawlAndCollect(tear: boolean) {
    const landing = new RawLanding(wh, { runId: 'run-1', pipeline: 't' });
    const torn: string[] = [];
    const client = new ServiceClient({
      baseUrl: sandbox.url,
      apiKey: 'svc_live_testtornpages',
      limits: { windowMs: 1000 },
      land: async (r) => {
        await landing.land(r);
        if (!tear || !r.path.includes('/on_page/pages')) return;
        await wh.flushIndex();
        const file = await tearRawFile(wh, t.dir, r.callId);
        torn.push(file);
      },
    });
    const post = await client.call(endpoint('on_page.task_post'), { tasks: [{ target: 'example.com', max_crawl_pages: 5 }] });
    const store = new RunStore(wh, 'run-1');
    const at = new Date();
    await store.recordPlanned([{ tag: 'c1', job: 'crawl', endpointId: 'on_page.task_post', batchNo: 0, spec: {} }], at);
    await store.recordPosted(
      [{ tag: 'c1', taskId: post.envelope.tasks![0]!.id!, ok: true, statusCode: 20100, message: 'Task Created.' }],
      at,
    );
    const res = await collectOnPage({
      client,
      wh,
      store,
      readsOf: () => ({ read: ['pages'], maxItems: 100 }),
      pollIntervalMs: 50,
      timeoutMs: 30_000,
      now: () => new Date(),
      sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    });
    const [task] = await wh.all<{ state: string; status_message: string | null; rows_loaded: number | null }>(
      `SELECT state, status_message, rows_loaded FROM tasks`,
    );
    const [{ pages }] = (await wh
      .all<{ pages: number }>(`SELECT count(*)::INT AS pages FROM on_page_pages`)
      .catch(() => [{ pages: 0 }])) as [{ pages: number }];
    return { res, task: task!, torn, pages };
  }

  it('is collected with its pages when every read loads', async () => {
    const { res, task, pages } = await crawlAndCollect(false);
    expect(res).toMatchObject({ collected: 1, failed: 0, pending: 0 });
    expect(task.state).toBe('collected');
    expect(pages).toBe(5);
  }, 60_000);

  it('is failed, naming the file that would not read, not collected without its pages', async () => {
    const { res, task, torn, pages } = await crawlAndCollect(true);
    expect(torn).toHaveLength(1);
    expect(res).toMatchObject({ collected: 0, failed: 1, pending: 0 });
    expect(task.state).toBe('failed');
    expect(task.status_message).toContain('could not be loaded');
    expect(task.status_message).toContain(torn[0]);
    expect(pages).toBe(0);
  }, 60_000);
});

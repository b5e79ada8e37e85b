import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import yargs from 'yargs';
import { apiCommand } from '../../src/cli/commands/api.js';
import { ServiceClient } from '../../src/client/index.js';
import { reconcile } from '../../src/ops/reconcile.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { publishStep } from '../../src/run/publish-step.js';
import { withWarehouse, type Warehouse } from '../../src/warehouse/index.js';
import { tempDir } from './helpers.js';

const KEY = 'svc_live_testbyhand';
const task = { keyword: 'trail running shoes', location_code: 2840, language_code: 'en' };

async function api(argv: string[]): Promise<{ out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => ((out += String(c)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => ((err += String(c)), true));
  try {
    await yargs(argv)
      .command(apiCommand)
      .strict()
      .exitProcess(false)
      .fail((msg, error) => {
        throw error ?? new Error(msg);
      })
      .parseAsync();
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
  return { out, err };
}

/** Issue 16, points 4 and 10: `.ai` task creation is a success, and calls by hand land in raw/ and the ledger. */
describe('pipeline api: .ai task creation, raw landing and the ledger', () => {
  let sb: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  const saved = { key: process.env.SVC_API_KEY, base: process.env.SVC_BASE_URL };
  beforeAll(async () => {
    sb = await startSandbox({ seed: 4 });
    tmp = await tempDir('pipeline-api-ledger-');
    process.env.SVC_API_KEY = KEY;
    process.env.SVC_BASE_URL = sb.url;
  });
  afterAll(async () => {
    if (saved.key === undefined) delete process.env.SVC_API_KEY;
    else process.env.SVC_API_KEY = saved.key;
    if (saved.base === undefined) delete process.env.SVC_BASE_URL;
    else process.env.SVC_BASE_URL = saved.base;
    await sb.close();
    await tmp.cleanup();
  });

  it('POST {path}.ai on task_post answers 20100 and is not reported as an error', async () => {
    const { out, err } = await api([
      'api',
      'POST',
      '/v3/serp/engA/organic/task_post.ai',
      '--data',
      JSON.stringify([task]),
      '--warehouse',
      tmp.dir,
    ]);
    const body = JSON.parse(out) as { status_code: number; id: string };
    expect(body.status_code).toBe(20100);
    expect(err).toMatch(/HTTP 200 · serp.engA.organic.task_post · charge 0\.\d+ CNY/);
    expect(Number(sb.log.at(-1)!.chargeCny)).toBeGreaterThan(0); // paid: exactly why it must not read as a failure
  });

  it('lands every call in raw/ and the ledger, so reconcile finds nothing amiss', async () => {
    await api(['api', 'POST', '/v3/serp/engA/organic/live/advanced', '--data', JSON.stringify([task]), '--warehouse', tmp.dir]);
    await api(['api', 'GET', '/v3/serp/engA/organic/tasks_ready', '--warehouse', tmp.dir]);
    const paths = sb.log.map((l) => l.path);
    await withWarehouse(tmp.dir, async (wh) => {
      const raw = await wh.all<{ path: string; file: string }>(`SELECT path, file FROM raw_responses ORDER BY received_at`);
      expect(raw.map((r) => r.path)).toEqual(paths);
      expect(raw.every((r) => r.file.startsWith('raw/'))).toBe(true);
      const ledger = await wh.all<{ request_id: string; charge: string; pipeline: string }>(
        `SELECT request_id, charge_cny::VARCHAR AS charge, pipeline FROM ledger ORDER BY called_at`,
      );
      expect(ledger.map((l) => l.request_id)).toEqual(sb.log.map((l) => l.requestId));
      expect(ledger.map((l) => Number(l.charge))).toEqual(sb.log.map((l) => Number(l.chargeCny)));
      expect(new Set(ledger.map((l) => l.pipeline))).toEqual(new Set(['api']));
      const client = new ServiceClient({ baseUrl: sb.url, apiKey: KEY, land: async () => {} });
      const r = await reconcile(wh, client);
      expect(Number(r.ledgerCny)).toBeGreaterThan(0);
      expect(r.discrepancies).toEqual([]);
    });
  });

  it('publishes the calls by hand: parquet/ledger holds every ledger row, and a later publish adds only new ones', async () => {
    const published = (wh: Warehouse) =>
      wh.all<{ r: string }>(`SELECT request_id AS r FROM read_parquet('${tmp.dir}/parquet/ledger/*/*.parquet') ORDER BY 1`);
    const ledger = (wh: Warehouse) => wh.all<{ r: string }>(`SELECT request_id AS r FROM ledger ORDER BY 1`);
    await withWarehouse(tmp.dir, async (wh) => {
      await publishStep(wh, () => new Date());
      expect((await published(wh)).length).toBeGreaterThan(0);
      expect(await published(wh)).toEqual(await ledger(wh));
    });
    // One more call a second later (its own run id), then the next publish.
    await new Promise((r) => setTimeout(r, 1100));
    await api(['api', 'GET', '/v3/serp/engA/organic/tasks_ready', '--warehouse', tmp.dir]);
    await withWarehouse(tmp.dir, async (wh) => {
      const p = await publishStep(wh, () => new Date());
      expect(p.files).toBeGreaterThan(0);
      expect(await published(wh)).toEqual(await ledger(wh));
      // Nothing new: nothing written.
      expect((await publishStep(wh, () => new Date())).files).toBe(0);
    });
  });
});

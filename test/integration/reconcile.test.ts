import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/client/index.js';
import { parsePipeline } from '../../src/config/index.js';
import { reconcile } from '../../src/ops/reconcile.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, tempDir } from './helpers.js';

const KEY = 'svc_live_testreconcile';
const pipeline = parsePipeline(
  'name: rec\njobs:\n  - kind: serp\n    depth: 30\n    locations: [2840]\n    keywords: [a, b, c, d]\n',
  'rec.yaml',
  {},
);

describe('reconcile the ledger with the account', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let client: ServiceClient;

  beforeEach(async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    tmp = await tempDir('pipeline-rec-');
    client = new ServiceClient({ baseUrl: sandbox.url, apiKey: KEY, land: async () => {} });
    await runPipeline({
      pipeline,
      file: 'rec.yaml',
      warehouseDir: tmp.dir,
      baseUrl: sandbox.url,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 5,
      models: false, // reconcile reads the ledger: no mart
    });
  });
  afterEach(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('finds nothing when every charge of the account is in the ledger', async () => {
    const r = await withWarehouse(tmp.dir, (wh) => reconcile(wh, client));
    expect(Number(r.ledgerCny)).toBeGreaterThan(0);
    expect(r.accountCny).toBe(r.ledgerCny);
    expect(r.balanceCny).toBe(`${sandbox.balanceCny()}00`);
    expect(r.discrepancies).toEqual([]);
  });

  it('finds a charge another client made on the account', async () => {
    const res = await request(`${sandbox.url}/v3/serp/engA/organic/task_post`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ keyword: 'elsewhere', location_code: 2840, language_code: 'en' }]),
    });
    const charged = String(res.headers['x-svc-charge-cny']);
    await res.body.dump();
    const r = await withWarehouse(tmp.dir, (wh) => reconcile(wh, client));
    const kinds = r.discrepancies.map((d) => [d.kind, d.amountCny]);
    expect(kinds).toContainEqual(['charge_not_in_ledger', `${charged}00`]);
    expect(kinds).toContainEqual(['unexplained_debit', `-${charged}00`]);
  });

  it('finds a call with no charge header and a balance rise no ledger row explains', async () => {
    await withWarehouse(tmp.dir, async (wh) => {
      const [post] = await wh.all<{ call_id: string }>(`SELECT call_id FROM ledger WHERE path LIKE '%task_post' LIMIT 1`);
      await wh.run(`UPDATE ledger SET charge_cny = NULL WHERE call_id = $1`, [post!.call_id]);
      const [last] = await wh.all<{ call_id: string }>(`SELECT call_id FROM ledger ORDER BY called_at DESC, call_id DESC LIMIT 1`);
      await wh.run(`UPDATE ledger SET balance_cny = balance_cny - 0.5 WHERE call_id = $1`, [last!.call_id]);
    });
    const r = await withWarehouse(tmp.dir, (wh) => reconcile(wh, client));
    const kinds = r.discrepancies.map((d) => d.kind);
    expect(kinds).toContain('missing_charge_header');
    expect(kinds).toContain('charge_not_in_ledger'); // the account charged what the ledger lost
    expect(r.discrepancies.find((d) => d.kind === 'unmatched_refund')?.amountCny).toBe('0.500000');
  });

  it('leaves the /v1 charges of a run with embeddings to the balance check, and finds nothing', async () => {
    const withVectors = parsePipeline(
      'name: vec\njobs:\n  - kind: serp\n    depth: 10\n    locations: [2840]\n    keywords: [e, f]\n  - kind: embeddings\n    name: vectors\n',
      'vec.yaml',
      {},
    );
    await runPipeline({
      pipeline: withVectors,
      file: 'vec.yaml',
      warehouseDir: tmp.dir,
      baseUrl: sandbox.url,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 5,
    });
    const [v1] = await withWarehouse(tmp.dir, (wh) =>
      wh.all<{ n: number; cny: string }>(`SELECT count(*)::INT AS n, sum(charge_cny)::VARCHAR AS cny FROM ledger WHERE path LIKE '/v1/%'`),
    );
    expect(v1!.n).toBeGreaterThan(0);
    expect(Number(v1!.cny)).toBeGreaterThan(0);
    const r = await withWarehouse(tmp.dir, (wh) => reconcile(wh, client));
    expect(r.discrepancies).toEqual([]);
    expect(Number(r.unitemizedCny)).toBe(Number(v1!.cny));
    expect(Number(r.accountCny)).toBeCloseTo(Number(r.ledgerCny) - Number(r.unitemizedCny), 6);
  });

  it('counts in the balance chain the charge of a call that gave no balance', async () => {
    // A second night the same day: its POST comes after calls whose answers carried a balance.
    await runPipeline({
      pipeline: parsePipeline(
        'name: rec2\njobs:\n  - kind: serp\n    depth: 30\n    locations: [2840]\n    keywords: [g, h]\n',
        'rec2.yaml',
        {},
      ),
      file: 'rec2.yaml',
      warehouseDir: tmp.dir,
      baseUrl: sandbox.url,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 5,
      models: false, // reconcile reads the ledger: no mart
    });
    await withWarehouse(tmp.dir, async (wh) => {
      // As an endpoint without X-Svc-Balance-CNY, or a POST whose answer was lost and then priced, would leave it.
      const [post] = await wh.all<{ call_id: string; before: number }>(
        `SELECT call_id, (SELECT count(*) FROM ledger AS b WHERE b.called_at < l.called_at AND b.balance_cny IS NOT NULL)::INT AS before
         FROM ledger AS l WHERE path LIKE '%task_post' AND pipeline = 'rec2'`,
      );
      expect(post!.before).toBeGreaterThan(0);
      await wh.run(`UPDATE ledger SET balance_cny = NULL WHERE call_id = $1`, [post!.call_id]);
    });
    const r = await withWarehouse(tmp.dir, (wh) => reconcile(wh, client));
    expect(r.discrepancies).toEqual([]);
  });
});

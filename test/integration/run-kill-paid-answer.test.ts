import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/index.js';
import { runExitCode, runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { landedAnswer, withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, tempDir } from './helpers.js';
import { killedAt } from './kill-helpers.js';

const KEY = 'svc_live_testkillpaidanswer';

const PIPELINE = `name: paid
jobs:
  - kind: serp
    depth: 10
    locations: [2840]
    keywords: [trail shoes, road shoes, hiking boots, camping tent, sleeping bag]
  - kind: embeddings
    name: vectors
`;

interface Call {
  call_id: string;
  request_id: string;
  request_hash: string;
  charge: number;
}

/** The charged `/v1` calls of the ledger under `path`, with the request each asked (raw index). */
const v1Calls = (dir: string, path: string) =>
  withWarehouse(dir, (w) =>
    w.all<Call>(
      `SELECT l.call_id, l.request_id, r.request_hash, l.charge_cny::DOUBLE AS charge FROM ledger l JOIN raw_responses r USING (call_id)
       WHERE l.path = $1 ORDER BY l.called_at`,
      [path],
    ),
  );

describe('a kill after a paid /v1 answer is landed and before what it says is kept: the rerun reads it back, never buys it again', () => {
  let sandbox: SandboxHandle;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let file: string;
  beforeAll(async () => {
    tmp = await tempDir('run-kill-paid-answer-');
    sandbox = await startSandbox({ readyAfterMs: 10 });
    file = join(tmp.dir, 'paid.yaml');
    await writeFile(file, PIPELINE);
  });
  afterAll(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  const env = () => ({ ...process.env, SVC_API_KEY: KEY, SVC_BASE_URL: sandbox.url });
  const rerun = async (dir: string) =>
    runPipeline({
      pipeline: await loadPipeline(file, { env: env() }),
      file,
      warehouseDir: dir,
      baseUrl: sandbox.url,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 20,
    });
  const asked = (from: number, path: string) => sandbox.log.slice(from).filter((l) => l.path === path);

  it('killed between a cluster label answer and the insert that keeps it: one chat call for that cluster, in the emulator and the ledger; the label stored', async () => {
    const dir = join(tmp.dir, 'label');
    const from = sandbox.log.length;
    const out = await killedAt([file, dir, sandbox.url], { ...env(), PIPELINE_TEST_KILL_AT: 'clusters:middle' });
    expect(out).toContain('killed at clusters:middle');
    // The killed process asked for one label: its answer is landed and in the ledger, the label not kept.
    const [first, ...none] = await v1Calls(dir, '/v1/chat/completions');
    expect(none).toEqual([]);
    expect(first!.charge).toBeGreaterThan(0);
    expect(asked(from, '/v1/chat/completions').map((l) => l.requestId)).toEqual([first!.request_id]);
    const landed = await withWarehouse(dir, (w) => landedAnswer(w, first!.request_hash));
    const answer = (JSON.parse(landed!.body) as { choices: { message: { content: string } }[] }).choices[0]!.message.content.split(
      '\n',
    )[0]!.trim();
    expect(
      await withWarehouse(dir, (w) => w.all(`SELECT * FROM duckdb_tables() WHERE table_name = 'keyword_cluster_labels'`)),
    ).toHaveLength(1);
    expect(await withWarehouse(dir, (w) => w.all(`SELECT * FROM keyword_cluster_labels`))).toEqual([]);

    const r = await rerun(dir);
    expect({ state: r.state, code: runExitCode(r), resumed: r.resumed }).toEqual({ state: 'completed', code: 0, resumed: true });
    const calls = await v1Calls(dir, '/v1/chat/completions');
    const { labels, summary } = await withWarehouse(dir, async (w) => ({
      labels: await w.all<{ label: string }>(`SELECT label FROM keyword_cluster_labels ORDER BY labelled_at`),
      summary: await w.all<{ label: string | null }>(`SELECT label FROM keyword_cluster_summary ORDER BY cluster_id`),
    }));
    expect(labels.length).toBeGreaterThanOrEqual(2);
    // One chat call a cluster, all told: the emulator answered exactly the calls of the ledger, each
    // request once; the killed one's answer was read back from the raw landing and kept as its label.
    expect(calls).toHaveLength(labels.length);
    expect(new Set(calls.map((c) => c.request_hash)).size).toBe(calls.length);
    expect(calls.filter((c) => c.request_hash === first!.request_hash)).toEqual([first]);
    expect(
      asked(from, '/v1/chat/completions')
        .map((l) => l.requestId)
        .sort(),
    ).toEqual(calls.map((c) => c.request_id).sort());
    expect(labels[0]!.label).toBe(answer.slice(0, 60));
    expect(summary.every((s) => s.label !== null)).toBe(true);
    expect(summary.map((s) => s.label)).toContain(answer.slice(0, 60));
  }, 120_000);

  it('killed after a label answer was landed and before its index rows were committed: the rerun indexes the file again and reads the answer from it', async () => {
    const dir = join(tmp.dir, 'unindexed');
    const from = sandbox.log.length;
    const out = await killedAt([file, dir, sandbox.url], { ...env(), PIPELINE_TEST_KILL_AT: 'clusters:middle' });
    expect(out).toContain('killed at clusters:middle');
    const [first] = await v1Calls(dir, '/v1/chat/completions');
    // As if killed between the durable file and the transaction of its rows: no index row, and the
    // ledger's row as written before the call went (no answer, charge unknown); the file alone names the request.
    await withWarehouse(dir, async (w) => {
      await w.run(`DELETE FROM raw_responses WHERE call_id = $1`, [first!.call_id]);
      await w.run(
        `UPDATE ledger SET http_status = NULL, request_id = NULL, charge_cny = NULL, cost_usd = NULL, balance_cny = NULL WHERE call_id = $1`,
        [first!.call_id],
      );
    });
    expect(await v1Calls(dir, '/v1/chat/completions')).toEqual([]);

    const r = await rerun(dir);
    expect({ state: r.state, code: runExitCode(r) }).toEqual({ state: 'completed', code: 0 });
    const calls = await v1Calls(dir, '/v1/chat/completions');
    const labels = await withWarehouse(dir, (w) => w.all(`SELECT * FROM keyword_cluster_labels`));
    expect(calls).toHaveLength(labels.length);
    expect(calls.filter((c) => c.request_hash === first!.request_hash)).toEqual([first]);
    expect(asked(from, '/v1/chat/completions')).toHaveLength(labels.length);
  }, 120_000);

  it('killed between an embeddings answer and the insert that keeps its vectors: the batch is bought once, its vectors stored', async () => {
    const dir = join(tmp.dir, 'embed');
    const from = sandbox.log.length;
    const out = await killedAt([file, dir, sandbox.url], { ...env(), PIPELINE_TEST_KILL_AT: 'embeddings:middle' });
    expect(out).toContain('killed at embeddings:middle');
    const [first, ...none] = await v1Calls(dir, '/v1/embeddings');
    expect(none).toEqual([]);
    expect(first!.charge).toBeGreaterThan(0);
    expect(await withWarehouse(dir, (w) => w.all(`SELECT * FROM keyword_embeddings`))).toEqual([]);

    const r = await rerun(dir);
    expect({ state: r.state, code: runExitCode(r) }).toEqual({ state: 'completed', code: 0 });
    expect(await v1Calls(dir, '/v1/embeddings')).toEqual([first]);
    expect(asked(from, '/v1/embeddings').map((l) => l.requestId)).toEqual([first!.request_id]);
    const kept = await withWarehouse(dir, (w) => w.all<{ keyword: string }>(`SELECT keyword FROM keyword_embeddings ORDER BY keyword`));
    expect(kept.map((k) => k.keyword)).toEqual(['camping tent', 'hiking boots', 'road shoes', 'sleeping bag', 'trail shoes']);
    // The clusters were made from them, and labelled once each.
    const labels = await withWarehouse(dir, (w) => w.all(`SELECT * FROM keyword_cluster_labels`));
    expect(asked(from, '/v1/chat/completions')).toHaveLength(labels.length);
  }, 120_000);
});

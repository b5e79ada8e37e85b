import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/client/index.js';
import { reconcile } from '../../src/ops/reconcile.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { PROJECT_ROOT, pipelineRun, tempDir } from './helpers.js';

const KEY = 'svc_live_testkillpost';
const CLI = join(PROJECT_ROOT, 'bin/pipeline.mjs');

describe('killed while its task_post is out, a run leaves the charged call in the ledger, and the rerun prices it', () => {
  let sandbox: SandboxHandle;
  let proxy: Server | undefined;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let file: string;
  const whDir = () => join(tmp.dir, 'wh');
  const env = (url: string) => ({ ...process.env, SVC_API_KEY: KEY, SVC_BASE_URL: url });
  const args = () => [file, '--warehouse', whDir(), '--json', '--poll-interval', '0.05', '--no-models'];
  const taskPosts = () => sandbox.log.filter((l) => l.path.endsWith('/task_post'));

  beforeEach(async () => {
    sandbox = await startSandbox({ readyAfterMs: 50 });
    tmp = await tempDir('pipeline-kill-post-');
    file = join(tmp.dir, 'nightly.yaml');
    await writeFile(
      file,
      `name: nightly\njobs:\n  - kind: serp\n    depth: 10\n    locations: [2840]\n    keywords: [alpha, beta, gamma, delta, epsilon]\n`,
    );
  });
  afterEach(async () => {
    await new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r()));
    proxy = undefined;
    await sandbox.close();
    await tmp.cleanup();
  });

  it('the POST the service charged is in the ledger before it goes; the rerun finds its tasks, prices the call, and reconcile agrees', async () => {
    // A night answered in full: the ledger knows what this endpoint's POSTs cost in CNY per USD.
    const first = await pipelineRun(args(), env(sandbox.url));
    expect(first.code).toBe(0);

    // The next run goes through a proxy: its task_post reaches the emulator (created and
    // charged), and the run is killed with SIGKILL before the answer comes back.
    let child: ReturnType<typeof spawn> | undefined;
    proxy = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const upstream = await request(sandbox.url + req.url, {
        method: req.method as 'GET' | 'POST',
        headers: { authorization: req.headers.authorization!, 'content-type': 'application/json' },
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      });
      const text = await upstream.body.text();
      if (req.url?.endsWith('/task_post')) {
        child!.kill('SIGKILL');
        res.socket?.destroy();
        return;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(upstream.headers))
        if (typeof v === 'string' && k !== 'content-length' && k !== 'transfer-encoding') headers[k] = v;
      res.writeHead(upstream.statusCode, headers);
      res.end(text);
    });
    await new Promise<void>((r) => proxy!.listen(0, '127.0.0.1', r));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const killed = await new Promise<NodeJS.Signals | null>((resolve) => {
      child = spawn(process.execPath, [CLI, 'run', ...args()], { env: env(proxyUrl), cwd: PROJECT_ROOT, stdio: 'ignore' });
      child.on('exit', (_code, signal) => resolve(signal));
    });
    expect(killed).toBe('SIGKILL');
    expect(taskPosts()).toHaveLength(2);
    const charged = taskPosts()[1]!.chargeCny;
    expect(Number(charged)).toBeGreaterThan(0);

    // The killed run's POST is in the ledger, its charge unknown, and its tasks name it.
    const pending = await withWarehouse(whDir(), async (wh) => ({
      rows: await wh.all<{ call_id: string; http_status: number | null; charge: string | null; tasks: number }>(
        `SELECT call_id, http_status, charge_cny::VARCHAR AS charge, tasks FROM ledger
         WHERE path LIKE '%/task_post' AND run_id = (SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1)`,
      ),
      named: await wh.all<{ state: string; post_call_id: string | null }>(
        `SELECT DISTINCT state, post_call_id FROM tasks WHERE run_id = (SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1)`,
      ),
    }));
    expect(pending.rows).toEqual([{ call_id: expect.any(String), http_status: null, charge: null, tasks: 5 }]);
    expect(pending.named).toEqual([{ state: 'planned', post_call_id: pending.rows[0]!.call_id }]);

    // The rerun resumes the killed run: it finds the five tasks by tag (never buys them again),
    // collects them, and prices the call from id_list's USD cost at the first night's ratio.
    const rerun = await pipelineRun(args(), env(sandbox.url));
    expect(rerun.code).toBe(0);
    expect(JSON.parse(rerun.stdout)).toMatchObject({ state: 'completed', resumed: true, tasks: { collected: 5 } });
    expect(taskPosts()).toHaveLength(2);
    await withWarehouse(whDir(), async (wh) => {
      const [row] = await wh.all<{ charge: string; estimated: boolean }>(
        `SELECT charge_cny::VARCHAR AS charge, charge_estimated AS estimated FROM ledger WHERE call_id = $1`,
        [pending.rows[0]!.call_id],
      );
      expect(row).toEqual({ charge: `${charged}00`, estimated: true });
      // Every CNY the emulator charged is in the ledger.
      const [sum] = await wh.all<{ cny: string }>(`SELECT sum(charge_cny)::VARCHAR AS cny FROM ledger WHERE task_id IS NULL`);
      const micros = (x: string) => Math.round(Number(x) * 1e6);
      expect(micros(sum!.cny)).toBe(sandbox.log.reduce((s, l) => s + micros(l.chargeCny), 0));
      // The account's balance chain agrees with the ledger; the estimate is listed to confirm.
      const client = new ServiceClient({ baseUrl: sandbox.url, apiKey: KEY, land: async () => {} });
      const r = await reconcile(wh, client);
      expect(r.discrepancies).toEqual([]);
      expect(r.estimates.map((e) => e.callId)).toEqual([pending.rows[0]!.call_id]);
    });
  }, 120_000);
});

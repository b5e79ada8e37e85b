import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline, type RunOptions } from '../../src/run/index.js';
import { clockFrom, startSandbox, type AdminStatsBody, type SandboxHandle } from '../../src/sandbox/index.js';
import { silentLogger, tempDir, warmReferenceLists } from './helpers.js';

const KEY = 'svc_live_testreadingsclock';
const pipeline = parsePipeline(
  `name: rclient\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [alpha, beta, gamma, delta]\n`,
  'rclient.yaml',
  {},
);

async function stats(sb: SandboxHandle): Promise<AdminStatsBody> {
  return (await (await request(`${sb.url}/__admin/stats`)).body.json()) as AdminStatsBody;
}

describe("id_list is bounded by the service's clock, not ours", () => {
  let sandbox: SandboxHandle | undefined;
  let proxy: Server | undefined;
  let tmp: { dir: string; cleanup: () => Promise<void> } | undefined;
  afterEach(async () => {
    await new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r()));
    await sandbox?.close();
    await tmp?.cleanup();
    proxy = sandbox = tmp = undefined;
  });

  it('the emulator sends its own clock in the Date header', async () => {
    sandbox = await startSandbox({ now: clockFrom(new Date('2026-01-01T02:00:00Z')) });
    const res = await request(`${sandbox.url}/v3/appendix/user_data`, { headers: { authorization: `Bearer ${KEY}` } });
    await res.body.dump();
    expect(Date.parse(String(res.headers.date))).toBeGreaterThanOrEqual(Date.parse('2026-01-01T02:00:00Z'));
    expect(Date.parse(String(res.headers.date))).toBeLessThan(Date.parse('2026-01-01T02:01:00Z'));
  });

  // The service's clock 10 minutes behind ours (a client clock ahead: "not after now" refuses our
  // now), and 10 minutes ahead (a window ending at our now would end before the tasks were made).
  it.each([
    ['behind', -10 * 60_000],
    ['ahead of', 10 * 60_000],
  ])('a lost POST is found by tag with the service’s clock %s ours, and never bought twice', async (_, offsetMs) => {
    sandbox = await startSandbox({ readyAfterMs: 0, admin: true, now: clockFrom(new Date(Date.now() + offsetMs)) });
    tmp = await tempDir('pipeline-rclock-');
    await warmReferenceLists(tmp.dir, pipeline, 'rclient.yaml', () => new Date(Date.now() + offsetMs));
    // A proxy that passes every call on and drops each answer: the POST is created and charged, its answer lost.
    proxy = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      await request(sandbox!.url + req.url, {
        method: req.method as 'GET' | 'POST',
        headers: { authorization: req.headers.authorization!, 'content-type': 'application/json' },
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      }).then((r) => r.body.dump());
      res.socket?.destroy();
    });
    await new Promise<void>((r) => proxy!.listen(0, '127.0.0.1', r));
    const base = (url: string, extra: Partial<RunOptions> = {}): RunOptions => ({
      pipeline,
      file: 'rclient.yaml',
      warehouseDir: tmp!.dir,
      baseUrl: url,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 5,
      collectTimeoutMs: 20_000,
      ...extra,
    });
    const first = await runPipeline(base(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, { collectTimeoutMs: 0 }));
    expect(first.stopKind).toBe('unknown');
    const notes: string[] = [];
    const second = await runPipeline(base(sandbox.url, { onProgress: (p) => void (p.kind === 'note' && notes.push(p.text)) }));
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(second.tasks).toMatchObject({ collected: 4, failed: 0 });
    expect(notes.join('\n')).toContain('4 found by tag');
    expect(Object.values((await stats(sandbox)).tasks_created_by_tag)).toEqual([1, 1, 1, 1]);
  });
});

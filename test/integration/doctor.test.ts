import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDoctor, type Check } from '../../src/ops/doctor.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { tempDir } from './helpers.js';

const byName = (checks: Check[]) => Object.fromEntries(checks.map((c) => [c.name, c]));

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('pipeline doctor', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  const servers: Server[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox({ keys: ['svc_live_testdoctorkey', 'svc_sandbox_doctorkey'] });
    tmp = await tempDir('pipeline-doctor-');
  });
  afterAll(async () => {
    await sandbox.close();
    for (const s of servers) s.close();
    await tmp.cleanup();
  });

  it('passes every check against a healthy service and says which kind of key it is', async () => {
    const checks = byName(await runDoctor({ baseUrl: sandbox.url, apiKey: 'svc_live_testdoctorkey', warehouseDir: join(tmp.dir, 'wh') }));
    expect(Object.keys(checks)).toEqual(['key', 'balance', 'limits', 'status', 'warehouse', 'clock']);
    for (const c of Object.values(checks)) expect(c.level).toBe('ok');
    expect(checks.key!.detail).toContain('live key accepted');
    expect(checks.balance!.detail).toMatch(/balance \d+(\.\d+)? CNY/);
    expect(checks.limits!.detail).toContain('serp 60');
    // A check creates nothing: the folder a first run would create is still not there.
    expect(checks.warehouse!.detail).toBe(`${join(tmp.dir, 'wh')} does not exist yet: the first run creates it (${tmp.dir} is writable)`);
    expect(existsSync(join(tmp.dir, 'wh'))).toBe(false);
  });

  it('fails a refused key with what to do, without printing the key', async () => {
    const checks = await runDoctor({ baseUrl: sandbox.url, apiKey: 'svc_live_testwrongkey', warehouseDir: join(tmp.dir, 'wh') });
    const key = byName(checks).key!;
    expect(key.level).toBe('fail');
    expect(key.detail).toContain('HTTP 401');
    expect(key.fix).toContain('SVC_API_KEY');
    expect(JSON.stringify(checks)).not.toContain('wrongkey');
  });

  it('reports outages from appendix/status, an unwritable warehouse, a skewed clock and a failing callback', async () => {
    const svc = await listen((req, res) => {
      res.setHeader('content-type', 'application/json');
      const result = req.url?.includes('user_data')
        ? [{ login: 'x', money: { balance: 5 }, limits: { minute: { total_serp: 60 } } }]
        : [{ api: 'serp', status: 'major_outage', endpoints: [{ endpoint: '/v3/serp/engA/organic/task_post', status: 'major_outage' }] }];
      res.end(JSON.stringify({ status_code: 20000, tasks: [{ id: 'x', status_code: 20000, result }] }));
    });
    const callback = await listen((_req, res) => {
      res.statusCode = 500;
      res.end();
    });
    servers.push(svc.server, callback.server);
    const file = join(tmp.dir, 'not-a-folder');
    await writeFile(file, 'x');
    const checks = byName(
      await runDoctor({
        baseUrl: svc.url,
        apiKey: 'svc_live_testdoctorkey',
        warehouseDir: file,
        callbackUrl: `${callback.url}/hook`,
        now: () => new Date(Date.now() + 5 * 60_000),
      }),
    );
    expect(checks.status).toMatchObject({ level: 'fail' });
    expect(checks.status!.detail).toContain('serp: major_outage');
    expect(checks.warehouse).toMatchObject({ level: 'fail' });
    expect(checks.clock).toMatchObject({ level: 'fail' });
    expect(checks.clock!.detail).toMatch(/^3\d\d\.\d s off/);
    expect(checks.callback).toMatchObject({ level: 'fail' });
    expect(checks.callback!.detail).toContain('answered 500');
  });
});

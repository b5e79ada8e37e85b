import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, open, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpoint } from '../../src/catalog/index.js';
import { renderCsv } from '../../src/cli/render.js';
import { resolveTarget } from '../../src/cli/service-target.js';
import { ServiceClient } from '../../src/client/index.js';
import { loadPipeline, parsePipeline } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';
import { ledgerReport } from '../../src/ops/ledger-report.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { RawLanding, withWarehouse } from '../../src/warehouse/index.js';
import { tempDir } from './helpers.js';

// Attacks through what the tool reads (command line, pipeline files, keyword files, the
// service's answers) and what it writes (CSV, warehouse files); all on this machine.

interface Out {
  code: number;
  stdout: string;
  stderr: string;
}

/** The real `pipeline` command in a child process, under `umask 022` (a common default). */
function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<Out> {
  const base = { ...process.env };
  delete base.SVC_API_KEY;
  delete base.SVC_BASE_URL;
  delete base.SVC_SANDBOX_URL;
  delete base.SVC_ALLOW_PLAIN_HTTP;
  return new Promise((resolve) => {
    execFile(
      '/bin/sh',
      ['-c', 'umask 022; exec "$0" bin/pipeline.mjs "$@"', process.execPath, ...args],
      { env: { ...base, ...env }, timeout: 120_000 },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: number }).code ?? 1) : 0;
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
      },
    );
  });
}

const FORMULA = "=cmd|' /C calc'!A0";

let tmp: { dir: string; cleanup: () => Promise<void> };
let sandbox: SandboxHandle;
beforeAll(async () => {
  tmp = await tempDir('pipeline-hostile-');
  sandbox = await startSandbox({ keys: ['svc_live_testrightkey1'], readyAfterMs: 50 });
});
afterAll(async () => {
  await sandbox.close();
  await tmp.cleanup();
});

describe('bad command-line values', () => {
  it('are usage errors (exit 2) naming the option and what it takes, with no stack trace', async () => {
    const faults = await cli(['sandbox', '--faults', 'default']);
    expect(faults.code).toBe(2);
    expect(faults.stderr).toMatch(/--faults "default": takes a profile \(none, [^)]*flaky/);
    expect(faults.stderr).not.toMatch(/unexpected error|\n\s+at /);
    const port = await cli(['sandbox', '--port', '99999', '--time-scale', '0']);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--port 99999: takes a whole number at least 0 and at most 65535');
    expect(port.stderr).toContain('--time-scale 0: takes a number above 0');
    const limit = await cli(['status', '--limit', 'many']);
    expect(limit.code).toBe(2);
    expect(limit.stderr).toContain('--limit');
    const level = await cli(['schedule', 'pipelines', '--list', '--log-level', 'loud']);
    expect(level.code).toBe(2);
    expect(level.stderr).toMatch(/log-level[\s\S]*loud[\s\S]*trace/);
  });
});

describe('plain http to another machine', () => {
  it('is refused before anything is sent, unless SVC_ALLOW_PLAIN_HTTP=1; loopback http is fine', async () => {
    // 192.0.2.1 is TEST-NET-1: never routed, and never contacted since the refusal comes first.
    const out = await cli(['run', 'pipelines/keywords.yaml', '--warehouse', join(tmp.dir, 'wh-plain')], {
      SVC_API_KEY: 'svc_live_testrightkey1',
      SVC_BASE_URL: 'http://192.0.2.1:9',
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('plain http to 192.0.2.1');
    expect(out.stderr).toContain('SVC_ALLOW_PLAIN_HTTP=1');
    expect(out.stderr).not.toContain('rightkey1');
    const env = { SVC_API_KEY: 'svc_live_testrightkey1', SVC_BASE_URL: 'http://192.0.2.1:9' };
    const announce = () => {};
    expect((await resolveTarget({ ...env, SVC_ALLOW_PLAIN_HTTP: '1' }, { announce })).baseUrl).toBe('http://192.0.2.1:9');
    expect((await resolveTarget({ ...env, SVC_BASE_URL: 'http://127.0.0.1:9' }, { announce })).baseUrl).toBe('http://127.0.0.1:9');
    await expect(resolveTarget(env, { announce })).rejects.toThrow(/plain http/);
  });

  it('refuses an address holding a user name or password before anything is sent, without repeating them', async () => {
    const out = await cli(['run', 'pipelines/keywords.yaml', '--warehouse', join(tmp.dir, 'wh-userinfo')], {
      SVC_API_KEY: 'svc_sandbox_rightkey1',
      SVC_SANDBOX_URL: `http://u:svc_sandbox_TOPSECRET9@127.0.0.1:${new URL(sandbox.url).port}`,
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('holds a user name or password before 127.0.0.1');
    expect(out.stderr + out.stdout).not.toContain('TOPSECRET9');
    expect(existsSync(join(tmp.dir, 'wh-userinfo'))).toBe(false);
    expect(sandbox.log.some((l) => l.path.includes('TOPSECRET9'))).toBe(false);
  });

  it('says what a service key looks like without the redaction eating its own words', async () => {
    const out = await cli(['doctor'], { SVC_API_KEY: 'not-a-key', SVC_BASE_URL: 'https://api.example.com' });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('it must start with svc_live_ or svc_sandbox_ followed by the key');
  });
});

describe('warehouse files', () => {
  it('are owner-only (0600 files, 0700 folders) whatever the umask', async () => {
    const wh = join(tmp.dir, 'wh-modes');
    const out = await cli(['run', 'pipelines/keywords.yaml', '--warehouse', wh, '--poll-interval', '0.05'], {
      SVC_API_KEY: 'svc_live_testrightkey1',
      SVC_BASE_URL: sandbox.url,
    });
    expect(out.code, out.stderr).toBe(0);
    const entries = [wh, ...(await readdir(wh, { recursive: true })).map((e) => join(wh, e))];
    const open: string[] = [];
    let files = 0;
    for (const e of entries) {
      const s = await stat(e);
      if (s.isFile()) files++;
      if ((s.mode & 0o077) !== 0) open.push(`${e} ${(s.mode & 0o777).toString(8)}`);
    }
    expect(files).toBeGreaterThan(5);
    expect(entries.some((e) => e.endsWith('.parquet'))).toBe(true);
    expect(open).toEqual([]);
  });
});

describe('a hostile service answer', () => {
  let hostile: Server;
  let url: string;
  beforeAll(async () => {
    // A loopback server answering a task_post with a formula for a request id and a task id.
    hostile = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const body = JSON.stringify({
          version: '0.1',
          status_code: 20000,
          status_message: 'Ok.',
          time: '0.01 sec.',
          cost: 0.0006,
          tasks_count: 2,
          tasks_error: 0,
          tasks: [
            {
              id: FORMULA,
              status_code: 20100,
              status_message: 'Task Created.',
              cost: 0.0003,
              result_count: 0,
              path: ['v3'],
              data: { keyword: '@SUM(A1)' },
              result: null,
            },
            {
              id: '6f1c2a8e-1d2b-4c3d-8e4f-5a6b7c8d9e0f',
              status_code: 20100,
              status_message: 'Task Created.',
              cost: 0.0003,
              result_count: 0,
              path: ['v3'],
              data: {},
              result: null,
            },
          ],
        });
        res.writeHead(200, {
          'content-type': 'application/json',
          'x-svc-request-id': FORMULA,
          'x-svc-charge-cny': '0.0043',
          'x-svc-cost-usd': '0.0006',
        });
        res.end(body);
      });
    });
    await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => hostile.close(r));
  });

  it('gives a task id that is not a UUID no place, and the ledger CSV neutralizes formula cells', async () => {
    const dir = join(tmp.dir, 'wh-csv');
    const outcome = await withWarehouse(dir, async (wh) => {
      const landing = new RawLanding(wh, { runId: 'run-csv', pipeline: '+evil' });
      const client = new ServiceClient({ baseUrl: url, apiKey: 'svc_live_testrightkey1', land: landing.land, maxAttempts: 1 });
      const call = await client
        .call(endpoint('serp.engA.organic.task_post'), { tasks: [{ keyword: 'oak desk', location_code: 2840, language_code: 'en' }] })
        .catch((e: unknown) => e);
      return { call, rows: await ledgerReport(wh, {}) };
    });
    // The verdicts: the formula id is refused (no id, failed), the UUID one stands.
    const tasks = (outcome.call as { outcome?: { tasks: { id: string | null; ok: boolean; message: string }[] } }).outcome?.tasks;
    expect(tasks?.map((t) => [t.id, t.ok])).toEqual([
      [null, false],
      ['6f1c2a8e-1d2b-4c3d-8e4f-5a6b7c8d9e0f', true],
    ]);
    expect(tasks?.[0]?.message).toMatch(/not a UUID/);
    // The ledger keeps what the service said, and its CSV cannot run it.
    const csv = renderCsv(outcome.rows);
    expect(csv).toContain(`'${FORMULA}`);
    expect(csv).toContain("'+evil");
    for (const line of csv.split('\n').slice(1)) for (const cell of line.split(',')) expect(cell).not.toMatch(/^"?[=+@\t\r]/);
    // And through the command.
    const out = await cli(['ledger', '--warehouse', dir, '--format', 'csv']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain(`'${FORMULA}`);
    expect(out.stdout.split('\n').some((l) => l.split(',').some((c) => /^"?=/.test(c)))).toBe(false);
  });
});

describe('keywords_file', () => {
  async function attempt(name: string, setup: (dir: string) => Promise<void>, extra = '') {
    const dir = join(tmp.dir, `kw-${name.replace(/\W/g, '')}`, 'pipelines');
    await mkdir(dir, { recursive: true });
    await setup(dir);
    const file = join(dir, 'p.yaml');
    await writeFile(file, `name: kw\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords_file: ${name}\n${extra}`);
    const t0 = Date.now();
    const err = await loadPipeline(file, { env: {} }).then(
      (p) => p,
      (e: unknown) => e,
    );
    return { err, ms: Date.now() - t0, dir };
  }

  it('refuses a FIFO, /dev/zero, a symlink out of the folder, a path out of it and a huge file, quickly, naming the file', async () => {
    const fifo = await attempt(
      'fifo.txt',
      (d) => new Promise((r, j) => execFile('mkfifo', [join(d, 'fifo.txt')], (e) => (e ? j(e) : r()))),
    );
    const zero = await attempt('zero.txt', (d) => symlink('/dev/zero', join(d, 'zero.txt')));
    const passwd = await attempt('passwd.txt', (d) => symlink('/etc/passwd', join(d, 'passwd.txt')));
    const out = await attempt('../outside.txt', (d) => writeFile(join(d, '..', 'outside.txt'), 'oak desk\n'));
    const huge = await attempt('huge.txt', async (d) => {
      const fh = await open(join(d, 'huge.txt'), 'w');
      await fh.truncate(66 * 1024 * 1024); // sparse: 66 MB without writing them
      await fh.close();
    });
    const cases = { fifo, zero, passwd, out, huge };
    const rules: Record<string, RegExp> = {
      fifo: /not a regular file/,
      zero: /leads outside|not a regular file/,
      passwd: /leads outside the pipeline file's folder/,
      out: /outside the pipeline file's folder/,
      huge: /bytes; at most 10485760/,
    };
    for (const [name, c] of Object.entries(cases)) {
      expect(c.err, name).toBeInstanceOf(ConfigError);
      const issue = (c.err as ConfigError).issues[0]!;
      expect(issue.field, name).toBe('jobs[0].keywords_file');
      expect(issue.rule, name).toMatch(rules[name]!);
      expect(issue.file, name).toMatch(/(fifo|zero|passwd|outside|huge)\.txt$/);
      expect(c.ms, name).toBeLessThan(2_000);
    }
  });

  it('reads a file outside the folder when the job says keywords_file_outside: true', async () => {
    const ok = await attempt(
      '../allowed.txt',
      (d) => writeFile(join(d, '..', 'allowed.txt'), 'oak desk\npine desk\n'),
      '    keywords_file_outside: true\n',
    );
    expect(ok.err).not.toBeInstanceOf(Error);
    expect((ok.err as { jobs: { keywords: string[] }[] }).jobs[0]!.keywords).toEqual(['oak desk', 'pine desk']);
  });
});

describe('YAML', () => {
  it('refuses 20,000 nested brackets by saying so, and reads merge keys', () => {
    const deep = (() => {
      try {
        parsePipeline(`name: d\njobs: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n`, 'deep.yaml', {});
      } catch (e) {
        return e;
      }
    })();
    expect(deep).toBeInstanceOf(ConfigError);
    expect((deep as ConfigError).message).toContain('nested more than 64 levels deep');
    const merged = parsePipeline(
      `name: m\njobs:\n  - &shared\n    kind: serp\n    locations: [2840]\n    depth: 20\n    keywords: [oak]\n  - <<: *shared\n    keywords: [pine]\n`,
      'merge.yaml',
      {},
    );
    expect(merged.jobs.map((j) => [j.kind, (j as { depth?: number }).depth, (j as { keywords?: string[] }).keywords])).toEqual([
      ['serp', 20, ['oak']],
      ['serp', 20, ['pine']],
    ]);
  });
});

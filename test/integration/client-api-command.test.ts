import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import yargs from 'yargs';
import { exploreCall } from '../../src/client/index.js';
import { apiCommand } from '../../src/cli/commands/api.js';
import { endpointsCommand } from '../../src/cli/commands/endpoints.js';
import { EtlError } from '../../src/errors.js';
import { DEFAULT_SANDBOX_KEY, startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { tempDir } from './helpers.js';

const task = { keyword: 'trail running shoes', location_code: 2840, language_code: 'en' };

/** Runs one command module in-process and returns what it wrote. */
async function run(argv: string[]): Promise<{ out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => ((out += String(c)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((c: string | Uint8Array) => ((err += String(c)), true));
  try {
    await yargs(argv)
      .command(apiCommand)
      .command(endpointsCommand)
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

describe('exploring the service by method and path', () => {
  let sb: SandboxHandle;
  const saved = { key: process.env.SVC_API_KEY, base: process.env.SVC_BASE_URL };
  beforeAll(async () => {
    sb = await startSandbox({ seed: 3 });
    process.env.SVC_API_KEY = DEFAULT_SANDBOX_KEY;
    process.env.SVC_BASE_URL = sb.url;
  });
  afterAll(async () => {
    if (saved.key === undefined) delete process.env.SVC_API_KEY;
    else process.env.SVC_API_KEY = saved.key;
    if (saved.base === undefined) delete process.env.SVC_BASE_URL;
    else process.env.SVC_BASE_URL = saved.base;
    await sb.close();
  });

  it('calls a live endpoint against the emulator and returns the raw body with its charge record', async () => {
    const r = await exploreCall(
      { baseUrl: sb.url, apiKey: DEFAULT_SANDBOX_KEY },
      { method: 'post', path: '/v3/serp/engA/organic/live/advanced/', data: task },
    );
    expect(r.endpoint.id).toBe('serp.engA.organic.live.advanced');
    expect(r.httpStatus).toBe(200);
    expect(JSON.parse(r.body).tasks[0].data.keyword).toBe(task.keyword);
    expect(r.charge.requestId).toBe(sb.log.at(-1)!.requestId);
    expect(r.error).toBeUndefined();
  });

  it('refuses a bad body or an unknown path before any call', async () => {
    const before = sb.log.length;
    const bad = await exploreCall(
      { baseUrl: sb.url, apiKey: DEFAULT_SANDBOX_KEY },
      { method: 'POST', path: '/v3/serp/engA/organic/live/advanced', data: [{ keyword: 'x'.repeat(701), location_code: 1 }] },
    ).catch((e) => e);
    expect((bad as EtlError).code).toBe('ETL_REQUEST_INVALID');
    expect((bad as Error).message).toContain('task 0: keyword: at most 700 characters');
    const unknown = await exploreCall(
      { baseUrl: sb.url, apiKey: DEFAULT_SANDBOX_KEY },
      { method: 'GET', path: '/v3/serp/engA/organic/task_post' },
    ).catch((e) => e);
    expect((unknown as Error).message).toMatch(/not an endpoint of the catalog/);
    expect(sb.log.length).toBe(before);
  });

  it('asks for the .ai variant when the path carries the suffix', async () => {
    const r = await exploreCall(
      { baseUrl: sb.url, apiKey: DEFAULT_SANDBOX_KEY },
      { method: 'POST', path: '/v3/serp/engA/organic/live/advanced.ai', data: task },
    );
    expect(sb.log.at(-1)!.path).toBe('/v3/serp/engA/organic/live/advanced.ai');
    const body = JSON.parse(r.body) as { status_code: number; items?: unknown[]; tasks?: unknown };
    expect(body.status_code).toBe(20000);
    expect(Array.isArray(body.items)).toBe(true);
    expect(body.tasks).toBeUndefined();
  });

  it('translates a /v2 path with a warning', async () => {
    const r = await exploreCall(
      { baseUrl: sb.url, apiKey: DEFAULT_SANDBOX_KEY },
      { method: 'GET', path: '/v2/serp/engA/organic/tasks_ready' },
    );
    expect(r.endpoint.id).toBe('serp.engA.organic.tasks_ready');
    expect(r.warnings.join()).toMatch(/v2 path .* use \/v3\/serp\/engA\/organic\/tasks_ready/);
  });

  it('`pipeline api` prints the body on stdout and the charge on stderr', async () => {
    const tmp = await tempDir('pipeline-api-');
    const { out, err } = await run([
      'api',
      'POST',
      '/v3/serp/engA/organic/live/regular',
      '--data',
      JSON.stringify([task]),
      '--warehouse',
      tmp.dir,
    ]).finally(() => tmp.cleanup());
    expect(JSON.parse(out).status_code).toBe(20000);
    expect(err).toMatch(/HTTP 200 · serp.engA.organic.live.regular · charge \d+\.\d+ CNY · request id \S+/);
    expect(out + err).not.toContain(DEFAULT_SANDBOX_KEY);
  });

  it('`pipeline endpoints --json` lists the catalog', async () => {
    const { out } = await run(['endpoints', '--json', '--filter', 'tasks_fixed']);
    const rows = JSON.parse(out) as Array<{ id: string; perMinute: number; charged: boolean }>;
    expect(rows).toHaveLength(21);
    expect(rows.every((r) => r.perMinute === 20 && r.charged === false)).toBe(true);
  });
});

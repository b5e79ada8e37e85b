import { writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { pipelineRun, tempDir } from './helpers.js';

const KEY = 'svc_live_testrefunserved';
const LANGUAGES = '/v3/serp/engA/languages';

const yaml = `name: ref-unserved
jobs:
  - kind: serp
    locations: [2840]
    languages: [en]
    keywords: [running shoes]
`;

/**
 * A loopback front to the emulator that answers the SERP languages list with HTTP 404 and
 * the service's not-found envelope, as a service that does not serve that list would, and
 * passes every other call to the emulator unchanged.
 */
async function withoutLanguagesList(target: string): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    if (req.url === LANGUAGES) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          version: '0.1.20251101',
          status_code: 40400,
          status_message: 'Not Found.',
          time: '0 sec.',
          cost: 0,
          tasks_count: 0,
          tasks_error: 0,
          tasks: null,
        }),
      );
      return;
    }
    const up = new URL(target);
    const fwd = httpRequest({ host: up.hostname, port: up.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    fwd.on('error', () => res.destroy());
    req.pipe(fwd);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('a reference list the service does not serve (404) or fails to serve (5xx) is a warning; the night goes on (issue 44, item 4.4)', () => {
  let sandbox: SandboxHandle | undefined;
  let front: Server | undefined;
  let tmp: { dir: string; cleanup: () => Promise<void> } | undefined;
  afterEach(async () => {
    await new Promise((resolve) => (front ? front.close(resolve) : resolve(undefined)));
    await sandbox?.close();
    await tmp?.cleanup();
    front = sandbox = tmp = undefined;
  });

  /** Runs the SERP pipeline through `baseUrl` with the real CLI; returns its exit, its output and what it posted. */
  async function night(baseUrl: string) {
    tmp = await tempDir('pipeline-ref-unserved-');
    const file = join(tmp.dir, 'p.yaml');
    await writeFile(file, yaml);
    const wh = join(tmp.dir, 'wh');
    const out = await pipelineRun([file, '--warehouse', wh, '--no-models', '--poll-interval', '0.05'], {
      ...process.env,
      SVC_API_KEY: KEY,
      SVC_BASE_URL: baseUrl,
    });
    const tasks = await withWarehouse(wh, (db) =>
      db.all<{ state: string; language_code: string; location_code: number }>(
        `SELECT state, json_extract_string(spec, '$.language_code') AS language_code, json_extract(spec, '$.location_code')::INT AS location_code FROM tasks`,
      ),
    );
    return { ...out, tasks };
  }

  it('HTTP 404 on serp/engA/languages: warned (list, status, values not checked), the task is bought with its language, exit 0', async () => {
    sandbox = await startSandbox({ keys: [KEY], readyAfterMs: 50 });
    const f = await withoutLanguagesList(sandbox.url);
    front = f.server;
    const r = await night(f.url);
    expect(r.stderr + r.stdout).toMatch(
      /the serp\/engA\/languages list could not be read \(HTTP 404, not served\): the values it would check were not checked and go to the service as written/,
    );
    expect(r.stderr + r.stdout).not.toMatch(/languages list named no language/);
    expect(r.code).toBe(0);
    // The locations list is served and read; the language goes to the service as written.
    expect(sandbox.log.filter((l) => l.path === '/v3/serp/engA/locations')).toHaveLength(1);
    expect(sandbox.log.filter((l) => l.path === LANGUAGES)).toHaveLength(0);
    expect(sandbox.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(1);
    expect(r.tasks).toEqual([{ state: 'collected', language_code: 'en', location_code: 2840 }]);
  });

  it('HTTP 500 on serp/engA/languages (after the retries): warned with the status, the task is bought, exit 0', async () => {
    sandbox = await startSandbox({
      keys: [KEY],
      readyAfterMs: 50,
      faults: { error5xx: 1 },
      faultPaths: /^\/v3\/serp\/engA\/languages$/,
    });
    const r = await night(sandbox.url);
    expect(r.stderr + r.stdout).toMatch(
      /the serp\/engA\/languages list could not be read \(HTTP 50[023]\): the values it would check were not checked and go to the service as written/,
    );
    expect(r.code).toBe(0);
    const languages = sandbox.log.filter((l) => l.path === LANGUAGES);
    expect(languages.length).toBeGreaterThan(1); // retried first, as any free GET is
    expect(languages.every((l) => l.status >= 500)).toBe(true);
    expect(r.tasks).toEqual([{ state: 'collected', language_code: 'en', location_code: 2840 }]);
  }, 60_000);
});

import { afterEach, describe, expect, it } from 'vitest';
import { endpoint } from '../../src/catalog/index.js';
import { ServiceClient } from '../../src/client/index.js';
import { EtlError, ExitCode, exitCodeFor } from '../../src/errors.js';
import { reply, scripted } from './client-helpers.js';

// The service never redirects; a proxy or a wrong base address does (an http:// address sent on
// to https://, a captive portal). A redirect is not followed: the key goes nowhere else, a
// charged POST is not sent twice, and the error names where it pointed.

const KEY = 'svc_live_testredirect';

describe('an answer that redirects', () => {
  const servers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((c) => c()));
  });

  it('is not followed, for a free read or a charged POST: exit code 5, naming the target, no retry', async () => {
    const elsewhere = await scripted((_req, res) => reply(res, 200, { status_code: 20000, tasks: [] }));
    servers.push(elsewhere.close);
    const proxy = await scripted((_req, res, n) => reply(res, n % 2 ? 307 : 301, '', { location: `${elsewhere.url}/moved?key=${KEY}` }));
    servers.push(proxy.close);
    const client = new ServiceClient({ baseUrl: proxy.url, apiKey: KEY, land: async () => {}, sleep: async () => {} });

    const read = await client.call(endpoint('serp.engA.locations')).catch((e: unknown) => e);
    const post = await client
      .call(endpoint('serp.engA.organic.task_post'), { tasks: [{ keyword: 'a', location_code: 2840, language_code: 'en', tag: 't' }] })
      .catch((e: unknown) => e);
    for (const [err, status] of [
      [read, 307],
      [post, 301],
    ] as const) {
      expect(err).toBeInstanceOf(EtlError);
      expect((err as EtlError).code).toBe('ETL_SERVICE_UNAVAILABLE');
      expect(exitCodeFor(err)).toBe(ExitCode.serviceUnavailable);
      expect((err as EtlError).message).toContain(`HTTP ${status}, a redirect to ${elsewhere.url}/moved, not followed`);
      expect((err as EtlError).message).not.toContain(KEY);
    }
    expect(proxy.seen.map((s) => s.method)).toEqual(['GET', 'POST']);
    expect(elsewhere.seen).toEqual([]);
  });
});

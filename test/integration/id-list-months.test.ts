import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpoint, formatSpecDatetime, monthsBefore } from '../../src/catalog/index.js';
import { ServiceClient } from '../../src/client/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';

const KEY = 'svc_live_testmonthends';
const NOW = new Date('2026-03-31T12:00:00Z');

/** Issue 16, point 8: id_list look-back in calendar months, clamped to the month's last day, on both sides. */
describe('id_list look-back on 31 March', () => {
  let sandbox: SandboxHandle;
  let client: ServiceClient;
  const idList = endpoint('serp.id_list');
  const query = (from: string, meta: boolean) => ({ datetime_from: from, datetime_to: formatSpecDatetime(NOW), include_metadata: meta });
  const raw = async (q: unknown) => {
    const res = await request(`${sandbox.url}/v3/serp/id_list`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify([q]),
    });
    return ((await res.body.json()) as { tasks: { status_code: number; status_message: string }[] }).tasks[0]!;
  };

  beforeAll(async () => {
    sandbox = await startSandbox({ now: () => NOW });
    client = new ServiceClient({ baseUrl: sandbox.url, apiKey: KEY, land: async () => {}, now: () => NOW });
  });
  afterAll(() => sandbox.close());

  it('clamps to the end of the shorter month', () => {
    expect(new Date(monthsBefore(NOW, 1)).toISOString()).toBe('2026-02-28T12:00:00.000Z');
    expect(new Date(monthsBefore(NOW, 6)).toISOString()).toBe('2025-09-30T12:00:00.000Z');
    expect(new Date(monthsBefore(new Date('2028-03-31T00:00:00Z'), 1)).toISOString()).toBe('2028-02-29T00:00:00.000Z');
    expect(new Date(monthsBefore(new Date('2026-01-15T08:00:00Z'), 1)).toISOString()).toBe('2025-12-15T08:00:00.000Z');
  });

  it('accepts a window starting on 28 February with metadata, on the client and in the emulator', async () => {
    const q = query('2026-02-28 12:00:00 +00:00', true);
    expect((await raw(q)).status_code).toBe(20000);
    const r = await client.call(idList, { tasks: [q] });
    expect(r.outcome.ok).toBe(true);
  });

  it('accepts six months back to 30 September without metadata', async () => {
    const q = query('2025-09-30 12:00:00 +00:00', false);
    expect((await raw(q)).status_code).toBe(20000);
    expect((await client.call(idList, { tasks: [q] })).outcome.ok).toBe(true);
  });

  it('refuses a second earlier, on both sides', async () => {
    const q = query('2026-02-28 11:59:59 +00:00', true);
    expect((await raw(q)).status_code).not.toBe(20000);
    await expect(client.call(idList, { tasks: [q] })).rejects.toThrow(/1 month back/);
    const q6 = query('2025-09-30 11:59:59 +00:00', false);
    expect((await raw(q6)).status_code).not.toBe(20000);
    await expect(client.call(idList, { tasks: [q6] })).rejects.toThrow(/6 months back/);
  });
});

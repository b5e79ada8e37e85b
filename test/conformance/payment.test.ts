/**
 * Conformance, black box: what happens when the balance cannot pay (Errors table, 402 rows;
 * result-shapes "40200 payment required"). The emulator starts with a balance of 0 CNY.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { charge, LIVE, SANDBOX, startEmulator, succeeded, type Emulator } from './emulator.js';

let e: Emulator;
beforeAll(async () => {
  e = await startEmulator(['--time-scale', '60', '--no-rate-limits', '--balance', '0']);
});
afterAll(() => e?.stop());

describe('Errors: insufficient balance', () => {
  it('"embeddings | insufficient balance | 402 | error type `svc_error`, code `50002`"', async () => {
    const r = await e.call('POST', '/v1/embeddings', { key: LIVE, body: { model: 'text-embedding-3-small', input: 'boots' } });
    expect(r.status).toBe(402);
    expect(r.body.error.type).toBe('svc_error');
    expect(String(r.body.error.code)).toBe('50002');
  });

  it('"image generation | balance cannot cover the maximum estimated charge | 402"', async () => {
    const r = await e.call('POST', '/v1/chat/completions', {
      key: LIVE,
      body: { model: 'imgmodel-3.1-flash-image', messages: [{ role: 'user', content: 'a red bicycle' }], stream: false, n: 1 },
    });
    expect(r.status).toBe(402);
  });

  it('result-shapes: "40200 payment required" ... "402 ... appear[s] at the HTTP level" (/v3 charged call, nothing created)', async () => {
    const r = await e.call('POST', '/v3/serp/engA/events/task_post', { key: LIVE, body: [{ keyword: 'jazz', location_code: 2840 }] });
    expect(succeeded(r)).toBe(false);
    const codes = [r.body.status_code, ...((r.body.tasks ?? []) as Array<{ status_code: number }>).map((t) => t.status_code)];
    expect(codes).toContain(40200);
    expect(codes).not.toContain(20100);
    expect(charge(r) || 0).toBe(0);
  });

  it('Billing: "Sandbox keys are never charged." (a sandbox key still works at a zero balance)', async () => {
    const r = await e.call('POST', '/v3/serp/engA/events/task_post', { key: SANDBOX, body: [{ keyword: 'jazz', location_code: 2840 }] });
    expect(r.body.tasks[0].status_code).toBe(20100);
    const emb = await e.call('POST', '/v1/embeddings', { key: SANDBOX, body: { model: 'text-embedding-3-small', input: 'boots' } });
    expect(emb.status).toBe(200);
  });

  it('Billing: "Calls that are free (their charge is 0) include: ... `user_data`" (served at a zero balance)', async () => {
    const r = await e.call('GET', '/v3/appendix/user_data', { key: LIVE });
    expect(succeeded(r)).toBe(true);
    expect(r.body.tasks[0].result[0].money.balance).toBe(0);
  });
});

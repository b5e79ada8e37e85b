import { describe, expect, it } from 'vitest';
import { evaluateEnvelope, readCharge, redact, type Envelope } from '../../../src/client/index.js';

function env(top: number, codes: number[]): Envelope {
  return {
    status_code: top,
    tasks_count: codes.length,
    tasks_error: codes.filter((c) => c !== 20000 && c !== 20100).length,
    tasks: codes.map((c, i) => ({ id: `00000000-0000-4000-8000-00000000000${i}`, status_code: c, status_message: `m${c}` })),
  };
}

describe('success rule', () => {
  it('is success only when HTTP, top level and every task succeed', () => {
    expect(evaluateEnvelope(200, env(20000, [20000, 20100])).ok).toBe(true);
  });

  it('fails on an HTTP error even when the body says 20000', () => {
    const o = evaluateEnvelope(500, env(20000, [20000]));
    expect(o.ok).toBe(false);
    expect(o.httpOk).toBe(false);
  });

  it('fails when the top-level status is not 20000', () => {
    const o = evaluateEnvelope(200, env(40200, []));
    expect(o.ok).toBe(false);
    expect(o.topLevelOk).toBe(false);
  });

  it('gives a verdict per task in a mixed batch instead of failing the whole call', () => {
    const o = evaluateEnvelope(200, env(20000, [20100, 40501, 20100, 40006]));
    expect(o.ok).toBe(false);
    expect(o.topLevelOk).toBe(true);
    expect(o.failedTasks).toBe(2);
    expect(o.tasks.map((t) => t.ok)).toEqual([true, false, true, false]);
    expect(o.tasks[1]).toMatchObject({ id: '00000000-0000-4000-8000-000000000001', statusCode: 40501, message: 'm40501' });
  });

  it('treats a missing body as a failure', () => {
    expect(evaluateEnvelope(200, undefined).ok).toBe(false);
  });
});

describe('charge headers', () => {
  it('reads the four headers as exact decimal strings', () => {
    const c = readCharge({
      'x-svc-charge-cny': '0.0430',
      'x-svc-cost-usd': '0.005972',
      'x-svc-balance-cny': '999.9570',
      'x-svc-request-id': 'req-1',
    });
    expect(c).toEqual({ chargeCny: '0.0430', costUsd: '0.005972', balanceCny: '999.9570', requestId: 'req-1' });
  });

  it('reads absent or malformed amounts as null, never as 0', () => {
    const c = readCharge({ 'x-svc-charge-cny': 'abc', 'x-svc-request-id': 'r' });
    expect(c.chargeCny).toBeNull();
    expect(c.costUsd).toBeNull();
    expect(c.balanceCny).toBeNull();
  });

  it('reads an amount too large for the ledger (over 12 digits before the point) as null, and a refund as negative', () => {
    const c = readCharge({
      'x-svc-charge-cny': '1234567890123.5',
      'x-svc-cost-usd': '999999999999.999999',
      'x-svc-balance-cny': '-0.0142',
    });
    expect(c.chargeCny).toBeNull();
    expect(c.costUsd).toBe('999999999999.999999');
    expect(c.balanceCny).toBe('-0.0142');
  });
});

describe('redact', () => {
  it('removes keys and bearer tokens from text', () => {
    const s = redact('Authorization: Bearer svc_live_test0abcdef12 failed for svc_sandbox_zzzz', []);
    expect(s).not.toContain('test0abcdef12');
    expect(s).not.toContain('zzzz');
  });
});

describe('task ids from the service', () => {
  it('refuses one that is not a UUID: no id, a failed verdict, whatever its status', () => {
    const o = evaluateEnvelope(200, {
      status_code: 20000,
      tasks: [
        { id: "=cmd|' /C calc'!A0", status_code: 20100 },
        { id: '6f1c2a8e-1d2b-4c3d-8e4f-5a6b7c8d9e0f', status_code: 20100 },
      ],
    });
    expect(o.tasks.map((t) => [t.id, t.ok])).toEqual([
      [null, false],
      ['6f1c2a8e-1d2b-4c3d-8e4f-5a6b7c8d9e0f', true],
    ]);
    expect(o.ok).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { redactCallbackSecrets } from '../../../src/redact.js';
import { landedLine, type RawResponse } from '../../../src/warehouse/index.js';

const TASK = '0f6c5a7e-1b2c-4d3e-8f90-123456789abc';
const ctx = { runId: 'run-1', pipeline: 'p' };

function raw(body: string): RawResponse {
  return {
    callId: 'call-1',
    receivedAt: new Date('2026-11-20T09:00:00Z'),
    method: 'POST',
    path: `/v3/serp/engA/organic/task_get/advanced/${TASK}`,
    endpointId: 'serp_organic_task_get_advanced',
    httpStatus: 200,
    charge: { requestId: null, chargeCny: null, costUsd: null, balanceCny: null },
    tasksSent: 0,
    body,
  };
}

const task = (extra: Record<string, unknown> = {}) => ({
  id: TASK,
  status_code: 20000,
  status_message: 'Ok.',
  cost: 0.002,
  data: { keyword: 'k', postback_url: 'http://127.0.0.1:1/AbCdEfGhIjKlMnOpQrSt_-12/postback?id=$id&tag=$tag', postback_data: 'advanced' },
  result: [{ keyword: 'k', items: [{ type: 'organic', rank_absolute: 1, title: 'caf\u00e9 \ud800' }] }],
  ...extra,
});

describe('a callback line built from a body parsed once', () => {
  it.each([
    ['compact', JSON.stringify({ status_code: 20000, tasks: [task()] })],
    [
      'pretty-printed, with a number JSON does not keep',
      JSON.stringify({ status_code: 20000, tasks: [task({ big: 1 })] }, null, 2).replace('"big": 1', '"big": 1.50'),
    ],
  ])('is the line the landing builds from the text (%s)', (_name, body) => {
    const opts = { callback: true, callbackTask: TASK };
    const fromText = landedLine(raw(body), ctx, opts);
    const redacted = redactCallbackSecrets(body);
    expect(redacted).not.toBe(body);
    const once = landedLine(raw(redacted), ctx, { ...opts, redactedAndParsed: { value: JSON.parse(redacted) } });
    expect(once).toEqual(fromText);
    expect(once.line).not.toContain('AbCdEfGhIjKlMnOpQrSt_-12');
  });
});

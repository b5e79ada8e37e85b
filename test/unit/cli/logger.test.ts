import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { REDACT_PATHS } from '../../../src/cli/logger.js';
import { redact } from '../../../src/client/index.js';

describe('log redaction', () => {
  it('censors key fields wherever they sit in a log line', () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) });
    const log = pino({ redact: { paths: REDACT_PATHS, censor: '***' } }, sink);
    log.info(
      {
        apiKey: 'svc_live_testsecret1',
        client: { apiKey: 'svc_live_testsecret2', headers: { authorization: 'Bearer svc_live_testsecret3' } },
      },
      'hello',
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toMatch(/secret[123]/);
    expect(JSON.parse(lines[0]!).apiKey).toBe('***');
  });

  it('scrubs keys from free text such as error messages', () => {
    expect(redact('connect failed for svc_live_test0abcdef12 at host')).toBe('connect failed for svc_live_*** at host');
    expect(redact('token=abc123', ['abc123'])).toBe('token=***');
  });
});

import { fetch } from 'undici';
import { afterEach } from 'vitest';
import { DEFAULT_SANDBOX_KEY, startSandbox, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.js';

export const LIVE_KEY = 'svc_live_testabcd1234';
export const SERP = '/v3/serp/engA/organic';
export const T0 = Date.parse('2026-03-02T08:00:00Z');
export type Json = any; // envelopes are read field by field

export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: Json;
  text: string;
}

const running: SandboxHandle[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

/** A task of the SERP organic schema. */
export const serpTask = (keyword: string, extra: Record<string, unknown> = {}) => ({
  keyword,
  location_code: 2840,
  language_code: 'en',
  ...extra,
});

/** A sandbox on a loopback port whose clock moves only when the test says so; closed after each test. */
export async function harness(opts: SandboxOptions = {}) {
  let nowMs = T0;
  const sb = await startSandbox({ port: 0, now: () => new Date(nowMs), ...opts });
  running.push(sb);
  return {
    sb,
    nowMs: () => nowMs,
    advance(ms: number) {
      nowMs += ms;
    },
    async call(method: 'GET' | 'POST', path: string, init: { key?: string | null; body?: unknown; raw?: string } = {}): Promise<Reply> {
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      const key = init.key === undefined ? DEFAULT_SANDBOX_KEY : init.key;
      if (key !== null) headers.Authorization = `Bearer ${key}`;
      const res = await fetch(`${sb.url}${path}`, {
        method,
        headers,
        ...(method === 'POST' ? { body: init.raw ?? JSON.stringify(init.body) } : {}),
      });
      const text = await res.text();
      let body: Json;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      return { status: res.status, headers: Object.fromEntries(res.headers), body, text };
    },
  };
}

import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fetch } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { tempDir } from './helpers.js';

// The emulator with `stateDir`: what it knows (tasks, their progress, the balance, the calls
// it answered) outlives the process, as the service's memory does.

const LIVE_KEY = 'svc_live_teststatetest1';
const SERP = '/v3/serp/engA/organic';
const T0 = Date.parse('2026-03-02T08:00:00Z');
type Json = any; // envelopes are read field by field

describe('sandbox: state kept in a folder', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let nowMs: number;
  const open: SandboxHandle[] = [];
  const start = async (o: { readyAfterMs?: number } = {}) => {
    const sb = await startSandbox({ now: () => new Date(nowMs), stateDir: join(tmp.dir, 'sandbox'), readyAfterMs: 1000, ...o });
    open.push(sb);
    return sb;
  };
  const call = async (sb: SandboxHandle, method: 'GET' | 'POST', path: string, body?: unknown) => {
    const res = await fetch(`${sb.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${LIVE_KEY}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { headers: Object.fromEntries(res.headers), body: (await res.json()) as Json };
  };
  const serpTask = (keyword: string, extra: Record<string, unknown> = {}) => ({
    keyword,
    location_code: 2840,
    language_code: 'en',
    ...extra,
  });

  beforeEach(async () => {
    tmp = await tempDir('pipeline-sandbox-state-');
    nowMs = T0;
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
    await tmp.cleanup();
  });

  it('a second emulator on the folder knows the tasks, their results, what was collected and the balance; nothing is charged again', async () => {
    const first = await start();
    const posted = await call(first, 'POST', `${SERP}/task_post`, [serpTask('coffee', { tag: 't1' }), serpTask('tea', { tag: 't2' })]);
    const ids: string[] = posted.body.tasks.map((t: Json) => t.id);
    const balance = posted.headers['x-svc-balance-cny'];
    expect(Number(posted.headers['x-svc-charge-cny'])).toBeGreaterThan(0);
    nowMs += 2000;
    const got = await call(first, 'GET', `${SERP}/task_get/advanced/${ids[0]}`);
    expect(got.body.tasks[0].status_code).toBe(20000);
    await first.close();
    open.splice(0);

    const second = await start();
    expect(second.state).toMatchObject({ restoredTasks: 2 });
    expect(second.balanceCny()).toBe(balance);
    // The collected task left the ready list; the other is listed and answers its result.
    const ready = await call(second, 'GET', `${SERP}/tasks_ready`);
    expect(ready.body.tasks[0].result.map((r: Json) => r.id)).toEqual([ids[1]]);
    const again = await call(second, 'GET', `${SERP}/task_get/advanced/${ids[0]}`);
    expect(again.body.tasks[0].result).toEqual(got.body.tasks[0].result); // rebuilt from the seed: the same content
    expect((await call(second, 'GET', `${SERP}/task_get/advanced/${ids[1]}`)).body.tasks[0].status_code).toBe(20000);
    // id_list finds them by tag (how a run looks up tasks whose POST answer it lost).
    const from = new Date(T0 - 60_000).toISOString().replace('T', ' ').slice(0, 19) + ' +00:00';
    const to = new Date(nowMs).toISOString().replace('T', ' ').slice(0, 19) + ' +00:00';
    const listed = await call(second, 'POST', '/v3/serp/id_list', [{ datetime_from: from, datetime_to: to, include_metadata: true }]);
    expect(listed.body.tasks[0].result.map((r: Json) => r.metadata.tag).sort()).toEqual(['t1', 't2']);
    // user_data counts the first process's calls too: one task_post today.
    const user = await call(second, 'GET', '/v3/appendix/user_data');
    expect(user.body.tasks[0].result[0].statistics.day.serp.task_post).toBe(1);
    expect(second.balanceCny()).toBe(balance);
  });

  it('stores neither the API key nor a callback URL secret', async () => {
    const sb = await start();
    const secret = 'Zq3xV9kLm2Np8Rt4Wy6B';
    const posted = await call(sb, 'POST', `${SERP}/task_post`, [
      serpTask('coffee', { postback_url: `http://127.0.0.1:9/${secret}/postback?id=$id`, postback_data: 'advanced' }),
    ]);
    expect(posted.body.tasks[0].status_code).toBe(20100);
    await sb.close();
    open.splice(0);
    const text = await readFile(join(tmp.dir, 'sandbox', 'emulator-seed1.ndjson'), 'utf8');
    expect(text).toContain('/***/postback');
    expect(text).not.toContain(secret);
    expect(text).not.toContain(LIVE_KEY);
    // The key's tasks are still its own when it calls again (the journal holds the key's hash).
    const again = await start();
    const listed = await call(again, 'POST', '/v3/serp/id_list', [
      { datetime_from: '2026-03-02 07:00:00 +00:00', datetime_to: '2026-03-02 08:00:00 +00:00' },
    ]);
    expect(listed.body.tasks[0].result).toHaveLength(1);
  });

  it('a line torn by a kill is dropped, and the journal goes on', async () => {
    const first = await start();
    const posted = await call(first, 'POST', `${SERP}/task_post`, [serpTask('coffee')]);
    await first.close();
    open.splice(0);
    const path = join(tmp.dir, 'sandbox', 'emulator-seed1.ndjson');
    await appendFile(path, '{"k":"task","t":{"id":"half');
    const second = await start();
    expect(second.state?.restoredTasks).toBe(1);
    nowMs += 2000;
    expect((await call(second, 'GET', `${SERP}/task_get/advanced/${posted.body.tasks[0].id}`)).body.tasks[0].status_code).toBe(20000);
    await second.close();
    open.splice(0);
    for (const line of (await readFile(path, 'utf8')).split('\n').filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('a line torn by a kill while another emulator has the folder: the next write starts its own line, nothing is misread', async () => {
    const owner = await start(); // holds owner.pid: the second is a sharer, which appends without rewriting
    const second = await start();
    const path = join(tmp.dir, 'sandbox', 'emulator-seed1.ndjson');
    await appendFile(path, '{"k":"task","t":{"id":"half');
    const posted = await call(second, 'POST', `${SERP}/task_post`, [serpTask('tea')]);
    await second.close();
    await owner.close();
    open.splice(0);
    const third = await start();
    expect(third.state?.restoredTasks).toBe(1);
    nowMs += 2000;
    expect((await call(third, 'GET', `${SERP}/task_get/advanced/${posted.body.tasks[0].id}`)).body.tasks[0].status_code).toBe(20000);
  });

  it('without stateDir nothing is written and a new emulator knows nothing (tests stay in memory)', async () => {
    const sb = await startSandbox({ now: () => new Date(nowMs), readyAfterMs: 0 });
    open.push(sb);
    expect(sb.state).toBeUndefined();
    const posted = await call(sb, 'POST', `${SERP}/task_post`, [serpTask('coffee')]);
    const other = await startSandbox({ now: () => new Date(nowMs) });
    open.push(other);
    expect((await call(other, 'GET', `${SERP}/task_get/advanced/${posted.body.tasks[0].id}`)).body.tasks[0].status_code).toBe(40401);
  });
});

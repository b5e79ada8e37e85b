/**
 * Conformance, black box: re-parsed tasks and `tasks_fixed` (States and transitions, "re-parsed
 * task"; "Fixed-task record"). The emulator re-parses every task (fault profile `reparse=1`)
 * one emulated minute after it is done; at time scale 60 that is one second.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { charge, startEmulator, succeeded, until, UUID, type Emulator, type Json } from './emulator.js';

let e: Emulator;
beforeAll(async () => {
  e = await startEmulator(['--time-scale', '60', '--no-rate-limits', '--faults', 'reparse=1']);
});
afterAll(() => e?.stop());

const ORGANIC = '/v3/serp/engA/organic';
const TASK = { keyword: 'trail running shoes', location_code: 2840, language_code: 'en' };

async function fixed(): Promise<Json[]> {
  const r = await e.call('GET', `${ORGANIC}/tasks_fixed`);
  expect(succeeded(r)).toBe(true);
  expect(charge(r) || 0).toBe(0);
  return r.body.tasks[0].result as Json[];
}

describe('States and transitions: re-parsed task', () => {
  let id: string;
  let row: Json;
  beforeAll(async () => {
    const post = await e.call('POST', `${ORGANIC}/task_post`, { body: [{ ...TASK, tag: 'fixed-tag' }] });
    id = post.body.tasks[0].id;
    row = await until(async () => (await fixed()).find((x) => x.id === id), 20_000, 200);
  });

  it('"re-parse completes | done within the last 24 hours and not collected | listed in `tasks_fixed`"', () => {
    expect(row.id).toBe(id);
  });

  it('Fixed-task record: "`id` (UUID), `se` (string ...), `se_type` (string; currently `v2`), `date_fixed` (string, UTC), `tag` (string)"', () => {
    expect(row.id).toMatch(UUID);
    expect(typeof row.se).toBe('string');
    expect(row.se_type).toBe('v2');
    expect(typeof row.date_fixed).toBe('string');
    expect(row.tag).toBe('fixed-tag');
  });

  it('"`endpoint_regular`, `endpoint_advanced`, `endpoint_html` (string or null ...)": for organic all three are readable', async () => {
    for (const f of ['regular', 'advanced', 'html']) {
      const p = row[`endpoint_${f}`];
      expect(typeof p === 'string' || p === null).toBe(true);
    }
    expect(row.endpoint_advanced).toContain(id);
    expect(succeeded(await e.call('GET', row.endpoint_advanced))).toBe(true);
  });

  it('"stays until collected": collected via task_get, it leaves `tasks_fixed`', async () => {
    await e.call('GET', `${ORGANIC}/task_get/advanced/${id}`);
    expect((await fixed()).find((x) => x.id === id)).toBeUndefined();
  });
});

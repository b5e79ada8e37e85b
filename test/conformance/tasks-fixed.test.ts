/**
 * Conformance, black box: re-parsed tasks and `tasks_fixed` (States and transitions, "re-parsed
 * task"; "Fixed-task record"). The emulator re-parses every task (fault profile `reparse=1`)
 * one emulated minute after it is done; at time scale 60 that is one second. Also the formats a
 * ready-list row names (result-shapes), which the same `endpoint_*` fields carry.
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

describe('Ready list formats (result-shapes: "null where the format is unsupported"), per the Versioning rule 6 table', () => {
  // "Merchant products | ... `task_get/advanced/`, `task_get/html/`"; "Merchant sellers | ... `task_get/advanced/`";
  // "Merchant product spec | ... `task_get/advanced/`"; "Marketplace products and ASIN | ... `task_get/advanced/` (products also `task_get/html/`)"
  const CASES: Array<[string, boolean]> = [
    ['/v3/merchant/engA/products', true],
    ['/v3/merchant/engA/sellers', false],
    ['/v3/merchant/engA/product_spec', false],
    ['/v3/merchant/amazon/products', true],
    ['/v3/merchant/amazon/asin', false],
  ];

  it('each merchant function lists `endpoint_advanced`, `endpoint_html` only where the table names html, and no `endpoint_regular`', async () => {
    const task = { keyword: 'rain boots', location_code: 2840, language_code: 'en' };
    const ids = new Map<string, string>();
    for (const [base] of CASES) ids.set(base, (await e.call('POST', `${base}/task_post`, { body: [task] })).body.tasks[0].id);
    for (const [base, html] of CASES) {
      const id = ids.get(base)!;
      const row = await until(async () => {
        const r = await e.call('GET', `${base}/tasks_ready`);
        return (r.body.tasks[0].result as Json[]).find((x) => x.id === id);
      });
      expect(row.endpoint_advanced, base).toBe(`${base}/task_get/advanced/${id}`);
      expect(row.endpoint_html, base).toBe(html ? `${base}/task_get/html/${id}` : null);
      expect(row.endpoint_regular ?? null, base).toBeNull();
    }
  });
});

// Was DISAGREEMENTS.md row 3 (the emulator gave engA/images all three formats); fixed in the emulator's endpoint table.
describe('Versioning rule 6: the images row names `task_get/advanced/` only', () => {
  // Versioning rule 6: "Images | `/v3/serp/engA/images/task_post/`, `tasks_ready/`, `task_get/advanced/`" (advanced only)
  const IMAGES = '/v3/serp/engA/images';
  let id: string;
  beforeAll(async () => {
    const post = await e.call('POST', `${IMAGES}/task_post`, { body: [{ ...TASK, tag: 'images' }] });
    id = post.body.tasks[0].id;
    expect(post.body.tasks[0].status_code).toBe(20100);
  });

  it('ready list (result-shapes): "`endpoint_regular`, `endpoint_advanced`, `endpoint_html` ... null where the format is unsupported"', async () => {
    const row = await until(async () => {
      const r = await e.call('GET', `${IMAGES}/tasks_ready`);
      return (r.body.tasks[0].result as Json[]).find((x) => x.id === id);
    });
    expect(row.endpoint_regular).toBeNull();
    expect(row.endpoint_html).toBeNull();
    expect(row.endpoint_advanced).toBe(`${IMAGES}/task_get/advanced/${id}`);
  });

  it('Fixed-task record: "`endpoint_regular`, `endpoint_advanced`, `endpoint_html` (string or null; null when that format is unsupported for the endpoint)"', async () => {
    const row = await until(
      async () => {
        const r = await e.call('GET', `${IMAGES}/tasks_fixed`);
        return (r.body.tasks[0].result as Json[]).find((x) => x.id === id);
      },
      20_000,
      200,
    );
    expect(row.endpoint_regular).toBeNull();
    expect(row.endpoint_html).toBeNull();
    expect(row.endpoint_advanced).toBe(`${IMAGES}/task_get/advanced/${id}`);
  });
});

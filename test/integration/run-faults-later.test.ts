// The later cases of run-faults.test.ts, split off so vitest runs the two halves in parallel (issue 45).
import { describe, expect, it } from 'vitest';
import { endpoint } from '../../src/catalog/index.js';
import { ServiceClient, type RawResponse } from '../../src/client/index.js';
import { refetchFixed } from '../../src/collect/refetch-fixed.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { RawLanding, withWarehouse } from '../../src/warehouse/index.js';
import { tearRawFile } from '../unit/warehouse/helpers.js';
import { faultsHarness, KEY, TASKS, yaml } from './faults-helpers.js';

describe('runs against a faulty service: every task created once, every result stored once, the ledger equal to the charges', () => {
  const h = faultsHarness();
  const { lookUp, start, opts, expectExactlyOnce } = h;

  it('a 402 part way: posting stops with the refused batch unsent, and after a payment the next run buys only the rest', async () => {
    // Each POST of 12 tasks costs 0.0516 CNY: the balance covers two.
    await start({ seed: 4, balanceCny: '0.1100' });
    const first = await runPipeline(opts());
    expect(first).toMatchObject({ state: 'partial', stopKind: 'balance' });
    expect(first.tasks).toMatchObject({ posted: 24, collected: 24 });
    expect(await runPipeline(opts())).toMatchObject({ state: 'partial', stopKind: 'balance', runId: first.runId }); // still no money: nothing bought
    h.sandbox.topUp('1.0000');
    const last = await runPipeline(opts());
    expect(last).toMatchObject({ state: 'completed', runId: first.runId });
    await expectExactlyOnce(0);
    expect(h.sandbox.log.filter((l) => l.path.endsWith('/task_post') && l.status === 402)).toHaveLength(2);
  }, 120_000);

  it('a budget reached part way: buys up to it, the batch that would pass it in part, and a higher budget finishes the run', async () => {
    await start({ seed: 6 });
    const first = await runPipeline(opts({}, 'budget_cny: 0.08\n'));
    expect(first).toMatchObject({ state: 'partial', stopKind: 'budget' });
    // Each engine is an endpoint of its own, priced by one task bought alone first: engA's 12 tasks
    // (0.0516 CNY), then engB's first (0.0043); 5 of engB's other 11 fit in the 0.0241 left.
    expect(first.tasks).toMatchObject({ posted: 18, collected: 18 });
    expect(Number(first.chargedCny)).toBeLessThanOrEqual(0.08);
    expect(Number(first.chargedCny)).toBeGreaterThan(0.08 - 0.0043);
    const last = await runPipeline(opts({}, 'budget_cny: 1\n'));
    expect(last).toMatchObject({ state: 'completed', runId: first.runId });
    await expectExactlyOnce(0);
  }, 120_000);

  /** The emulator's answer for a task now (a free task_get), as the warehouse would store it. */
  async function served(engine: string, id: string): Promise<{ checked: string; items: number }> {
    const body = await lookUp<{ tasks: { result: { datetime: string; items: unknown[] }[] }[] }>(
      `/v3/serp/${engine}/organic/task_get/advanced/${id}`,
    );
    const result = body.tasks[0]!.result[0]!;
    return { checked: result.datetime, items: result.items.length };
  }

  const STORED = `SELECT r.task_id, t.endpoint_id, strftime(r.checked_at, '%Y-%m-%d %H:%M:%S') || ' +00:00' AS checked,
                         (SELECT count(*) FROM serp_items i WHERE i.task_id = r.task_id)::INT AS items
                  FROM serp_results r JOIN tasks t USING (task_id) ORDER BY r.task_id`;

  /** Every listed re-parse is done, and the warehouse holds what the service serves now, once per task. */
  async function expectEveryRefetchDone(): Promise<void> {
    await withWarehouse(h.tmp.dir, async (wh) => {
      const [r] = await wh.all<{ listed: number; done: number }>(
        `SELECT count(*)::INT AS listed, count(refetched_at)::INT AS done FROM task_refetches`,
      );
      expect(r).toEqual({ listed: TASKS, done: TASKS });
      const after = await wh.all<{ task_id: string; endpoint_id: string; checked: string; items: number }>(STORED);
      expect(after).toHaveLength(TASKS + 3);
      for (const row of after)
        expect({ checked: row.checked, items: row.items }).toEqual(await served(row.endpoint_id.split('.')[1]!, row.task_id));
    });
  }

  /** A later pipeline of the same warehouse: one keyword on the same three engines (3 tasks), so it reads their tasks_fixed lists. */
  const later = yaml()
    .replace('name: faults', 'name: later')
    .replace('[2840, 2826]', '[2840]')
    .replace(/keywords: \[.*\]/, 'keywords: [omega]');

  /**
   * An emulator on real time plus an offset the test moves: no rate limits and no time
   * scale, so a re-parse comes a full minute after a task is done, well after the run that
   * collected it, until the test jumps the clock.
   */
  async function startReparsing(seed: number): Promise<{ jump: (ms: number) => void }> {
    let offset = 0;
    h.sandbox = await startSandbox({
      admin: true,
      seed,
      readyAfterMs: 300,
      faults: { reparse: 1 },
      now: () => new Date(Date.now() + offset),
    });
    return { jump: (ms) => void (offset += ms) };
  }

  it('re-parsed tasks: tasks_fixed lists them, each is fetched again once and its rows replaced, not added to', async () => {
    const clock = await startReparsing(9);
    const first = await runPipeline(opts());
    expect(first.state).toBe('completed');
    const before = await withWarehouse(h.tmp.dir, (wh) => wh.all<{ task_id: string; checked: string; items: number }>(STORED));
    expect(before).toHaveLength(TASKS);
    clock.jump(2 * 60_000); // every task is re-parsed a minute after it was done

    // The next run (another pipeline of the same warehouse) collects its own tasks, then the fixed ones.
    const second = await runPipeline(opts({}, '', later));
    expect(second.state).toBe('completed');
    const firstIds = new Set(before.map((b) => b.task_id));
    await withWarehouse(h.tmp.dir, async (wh) => {
      const refetches = await wh.all<{ task_id: string; run_id: string; status_code: number; rows_loaded: number }>(
        `SELECT task_id, run_id, status_code, rows_loaded FROM task_refetches ORDER BY task_id`,
      );
      expect(refetches.map((r) => r.task_id)).toEqual([...firstIds].sort()); // each re-parse once; the new run's own tasks were collected after nothing
      expect(refetches.every((r) => r.run_id === second.runId && r.status_code === 20000 && r.rows_loaded > 10)).toBe(true);
      // The warehouse now holds what the service serves after the fix, once per task: old rows replaced.
      const after = await wh.all<{ task_id: string; endpoint_id: string; checked: string; items: number }>(STORED);
      expect(after).toHaveLength(TASKS + 3);
      for (const row of after.filter((a) => firstIds.has(a.task_id))) {
        expect({ checked: row.checked, items: row.items }).toEqual(await served(row.endpoint_id.split('.')[1]!, row.task_id));
        expect(row.checked).not.toBe(before.find((b) => b.task_id === row.task_id)!.checked);
      }
      const [t] = await wh.all<{ rows: number }>(
        `SELECT sum(rows_loaded)::INT AS rows FROM tasks WHERE task_id IN (SELECT task_id FROM task_refetches)`,
      );
      expect(t!.rows).toBe(refetches.reduce((a, r) => a + r.rows_loaded, 0)); // the tasks' row counts follow
    });
    for (const engine of ['engA', 'engB', 'engC']) {
      expect((await lookUp<{ tasks: { result: unknown[] }[] }>(`/v3/serp/${engine}/organic/tasks_fixed`)).tasks[0]!.result).toEqual([]);
    }

    // A third run fetches none of them again.
    const gets = () => h.sandbox.log.filter((l) => l.path.includes('/task_get/') && firstIds.has(l.path.split('/').at(-1)!)).length;
    const fetchedBefore = gets();
    expect((await runPipeline(opts({}, '', later))).state).toBe('completed');
    expect(gets()).toBe(fetchedBefore);
    await expectExactlyOnce(0, TASKS + 6);
  }, 120_000);

  it('a refetch whose body landed but was never loaded (a crash) is finished from its row, though the service lists it no more', async () => {
    const clock = await startReparsing(10);
    expect((await runPipeline(opts())).state).toBe('completed');
    clock.jump(2 * 60_000);
    const posts = (
      await withWarehouse(h.tmp.dir, (wh) => wh.all<{ endpoint_id: string }>(`SELECT DISTINCT endpoint_id FROM tasks ORDER BY 1`))
    ).map((r) => endpoint(r.endpoint_id));
    await withWarehouse(h.tmp.dir, async (wh) => {
      const landing = new RawLanding(wh, { runId: 'crashed-refetch', pipeline: 'faults' });
      let gets = 0;
      // The process "dies" once the 5th refetched body is landed, before it is loaded.
      const land = async (raw: RawResponse) => {
        await landing.land(raw);
        if (raw.path.includes('/task_get/') && ++gets === 5) throw new Error('killed');
      };
      const client = new ServiceClient({ baseUrl: h.sandbox.url, apiKey: KEY, land });
      await expect(refetchFixed({ client, wh, runId: 'crashed-refetch', postEndpoints: posts, now: () => new Date() })).rejects.toThrow(
        'killed',
      );
      const [r] = await wh.all<{ listed: number; done: number }>(
        `SELECT count(*)::INT AS listed, count(refetched_at)::INT AS done FROM task_refetches`,
      );
      expect(r).toEqual({ listed: TASKS, done: 4 }); // the four fetched before it were loaded; the 5th only landed
    });
    const listed = await lookUp<{ tasks: { result: unknown[] }[] }>(`/v3/serp/engA/organic/tasks_fixed`);
    expect(listed.tasks[0]!.result).toHaveLength(12 - 5); // the service counts the 5th as collected

    // Written down before the fetch: the next run finishes them all, the 5th included.
    expect((await runPipeline(opts({}, '', later))).state).toBe('completed');
    await expectEveryRefetchDone();
    await expectExactlyOnce(0, TASKS + 3);
  }, 120_000);

  it('a refetched answer that landed torn: the old rows stay, its refetch stays open, and the next run fetches it again', async () => {
    const clock = await startReparsing(11);
    expect((await runPipeline(opts())).state).toBe('completed');
    const before = await withWarehouse(h.tmp.dir, (wh) => wh.all<{ task_id: string; checked: string; items: number }>(STORED));
    clock.jump(2 * 60_000);
    const posts = (
      await withWarehouse(h.tmp.dir, (wh) => wh.all<{ endpoint_id: string }>(`SELECT DISTINCT endpoint_id FROM tasks ORDER BY 1`))
    ).map((r) => endpoint(r.endpoint_id));
    let tornTask = '';
    await withWarehouse(h.tmp.dir, async (wh) => {
      const landing = new RawLanding(wh, { runId: 'torn-refetch', pipeline: 'faults' });
      let gets = 0;
      let torn = '';
      // The 5th refetched body is landed, then its file torn (a disk fault): DuckDB cannot read it.
      const land = async (raw: RawResponse) => {
        await landing.land(raw);
        if (!raw.path.includes('/task_get/') || ++gets !== 5) return;
        await wh.flushIndex();
        torn = await tearRawFile(wh, h.tmp.dir, raw.callId);
        tornTask = raw.path.split('/').at(-1)!;
      };
      const client = new ServiceClient({ baseUrl: h.sandbox.url, apiKey: KEY, land });
      const r = await refetchFixed({ client, wh, runId: 'torn-refetch', postEndpoints: posts, now: () => new Date() });
      expect(r.refetched).toBe(TASKS - 1);
      expect(r.unloaded.map((u) => u.id)).toEqual([tornTask]);
      expect(r.unloaded[0]!.why).toContain(torn);
      const open = await wh.all<{ task_id: string }>(`SELECT task_id FROM task_refetches WHERE refetched_at IS NULL`);
      expect(open.map((o) => o.task_id)).toEqual([tornTask]); // not marked refetched with the old answer's rows
      const now = await wh.all<{ task_id: string; endpoint_id: string; checked: string; items: number }>(STORED);
      expect(now.find((x) => x.task_id === tornTask)).toMatchObject(before.find((b) => b.task_id === tornTask)!); // its old rows, as they were
      for (const row of now.filter((x) => x.task_id !== tornTask))
        expect({ checked: row.checked, items: row.items }).toEqual(await served(row.endpoint_id.split('.')[1]!, row.task_id));
    });

    // The next run fetches the torn one again (a free task_get) and loads its fixed answer.
    const gets = () => h.sandbox.log.filter((l) => l.path.endsWith(`/task_get/advanced/${tornTask}`)).length;
    const fetchedBefore = gets();
    expect((await runPipeline(opts({}, '', later))).state).toBe('completed');
    expect(gets()).toBe(fetchedBefore + 1);
    await expectEveryRefetchDone();
    await expectExactlyOnce(0, TASKS + 3);
  }, 120_000);
});

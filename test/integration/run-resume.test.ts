import { describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { ServiceClient } from '../../src/client/index.js';
import { reconcile } from '../../src/ops/reconcile.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { pipeline, resumeHarness } from './resume-helpers.js';

describe('a second run finishes an unfinished one and never pays twice', () => {
  const h = resumeHarness();
  const { clock, base, answerDropper, runsAndTasks } = h;

  it('collects what the first run posted, under the same run id, without posting again', async () => {
    h.sandbox = await startSandbox({ now: clock.now, readyAfterMs: 60_000 });
    const first = await runPipeline(base(h.sandbox.url));
    expect(first.state).toBe('partial');
    expect(first.tasks).toMatchObject({ posted: 5, collected: 0, pending: 5 });
    clock.advance(61_000);
    const second = await runPipeline(base(h.sandbox.url, { collectTimeoutMs: 10_000 }));
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(second.tasks).toMatchObject({ planned: 5, posted: 5, collected: 5, pending: 0 });
    expect(h.sandbox.log.filter((l) => l.method === 'POST')).toHaveLength(1);
    const { runs } = await runsAndTasks();
    expect(runs).toEqual([{ run_id: first.runId, state: 'completed' }]);
  });

  it('posts again only tasks whose POST never reached the service', async () => {
    const dead = await startSandbox();
    const deadUrl = dead.url;
    await dead.close(); // nothing listens there any more: connections are refused
    const first = await runPipeline(base(deadUrl, { limits: { windowMs: 1 } }));
    expect(first.state).toBe('partial');
    expect(first.stopKind).toBe('unavailable');
    expect((await runsAndTasks()).tasks).toEqual([{ state: 'unsent', n: 5 }]);
    // Each attempt's ledger row, written before it was to go, went when it made no connection.
    expect(await withWarehouse(h.wh.dir, (db) => db.all(`SELECT call_id FROM ledger`))).toEqual([]);

    h.sandbox = await startSandbox({ now: clock.now, readyAfterMs: 0 });
    const second = await runPipeline(base(h.sandbox.url, { collectTimeoutMs: 10_000 }));
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(second.tasks).toMatchObject({ planned: 5, posted: 5, collected: 5 });
    expect(h.sandbox.log.filter((l) => l.method === 'POST')).toHaveLength(1);
  });

  it('interrupted as it starts, a resume sends nothing (not even its look-up by tag), ends partial, and the next finishes', async () => {
    h.sandbox = await startSandbox({ now: clock.now, readyAfterMs: 0 });
    const proxy = await answerDropper(h.sandbox.url);
    const first = await runPipeline(base(proxy));
    expect(first.stopKind).toBe('unknown');
    const calls = h.sandbox.log.length;
    // Ctrl-C as the resume starts: its look-up by tag (id_list) would be the next call.
    const stop = new AbortController();
    const onProgress = (p: { kind: string; text?: string }) => void (p.text?.startsWith('resuming unfinished run') && stop.abort());
    const second = await runPipeline(base(h.sandbox.url, { signal: stop.signal, onProgress }));
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('partial');
    // The look-up was not sent: the tasks' outcome is still unknown, for the next run to look up.
    expect(second.stopKind).toBe('unknown');
    expect(h.sandbox.log).toHaveLength(calls); // nothing sent
    expect((await runsAndTasks()).runs).toEqual([{ run_id: first.runId, state: 'partial' }]);

    const third = await runPipeline(base(h.sandbox.url, { collectTimeoutMs: 10_000 }));
    expect(third.runId).toBe(first.runId);
    expect(third.state).toBe('completed');
    expect(h.sandbox.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(1); // never bought twice
  });

  it('finds by tag the tasks a lost answer had created, and collects them without buying them again', async () => {
    h.sandbox = await startSandbox({ now: clock.now, readyAfterMs: 0 });
    const proxy = await answerDropper(h.sandbox.url);
    const first = await runPipeline(base(proxy));
    expect(first.stopKind).toBe('unknown');
    expect((await runsAndTasks()).tasks).toEqual([{ state: 'unknown', n: 5 }]);
    expect(h.sandbox.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(1); // created and charged

    const notes: string[] = [];
    const onProgress = (p: { kind: string; text?: string }) => void (p.kind === 'note' && notes.push(p.text!));
    const second = await runPipeline(base(h.sandbox.url, { collectTimeoutMs: 10_000, onProgress }));
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(second.tasks).toMatchObject({ planned: 5, posted: 5, collected: 5 });
    expect(h.sandbox.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(1); // never bought twice
    // The POST's charge came back with the answer that was lost: its ledger row has the USD cost
    // id_list gave its tasks, and no earlier answered POST gives a CNY price for it.
    expect(notes.find((n) => n.includes('5 found by tag'))).toMatch(
      /1 POST\(s\) have no earlier charge to price them by: their charge is unknown. `pipeline reconcile` lists it/,
    );
    const lostRows = await withWarehouse(h.wh.dir, (db) =>
      db.all<{ h: number | null; c: string | null; u: string; e: boolean }>(
        `SELECT http_status AS h, charge_cny::VARCHAR AS c, cost_usd::VARCHAR AS u, charge_estimated AS e FROM ledger WHERE path LIKE '%/task_post'`,
      ),
    );
    expect(lostRows).toEqual([{ h: null, c: null, u: expect.stringMatching(/^0\.0\d+$/), e: false }]);
    expect(Number(lostRows[0]!.u)).toBeGreaterThan(0);
    expect(h.sandbox.log.some((l) => l.path.endsWith('/serp/id_list'))).toBe(true);
  });

  it('puts the charge of a POST whose answer was lost in the ledger, priced once its tasks are found, and reconcile agrees', async () => {
    h.sandbox = await startSandbox({ now: clock.now, readyAfterMs: 0 });
    // The runs' clock moves on at each reading, so that the ledger's calls are in the order they
    // were made (reconcile follows the balance from call to call).
    const ticking = () => {
      clock.advance(1);
      return clock.now();
    };
    // An answered night first: the ledger knows what this endpoint's POSTs cost in CNY per USD.
    const answered = await runPipeline(
      base(h.sandbox.url, { collectTimeoutMs: 10_000, now: ticking, sleep: async (ms: number) => clock.advance(ms) }),
    );
    expect(answered.state).toBe('completed');
    clock.advance(86_400_000);
    // The next night's POST reaches the service, and its answer never comes back.
    const lost = await runPipeline(
      base(await answerDropper(h.sandbox.url), { now: ticking, sleep: async (ms: number) => clock.advance(ms) }),
    );
    expect(lost.stopKind).toBe('unknown');
    const posts = h.sandbox.log.filter((l) => l.path.endsWith('/task_post'));
    expect(posts).toHaveLength(2);
    const charged = posts[1]!.chargeCny;
    expect(Number(charged)).toBeGreaterThan(0);
    const postRows = () =>
      withWarehouse(h.wh.dir, (db) =>
        db.all<{
          call_id: string;
          http_status: number | null;
          charge: string | null;
          cost: string | null;
          estimated: boolean | null;
          tasks: number;
        }>(
          `SELECT l.call_id, l.http_status, l.charge_cny::VARCHAR AS charge, l.cost_usd::VARCHAR AS cost, l.charge_estimated AS estimated, l.tasks
           FROM ledger AS l WHERE l.run_id = $1 AND l.path LIKE '%/task_post'`,
          [lost.runId],
        ),
      );
    // The call is in the ledger, its charge unknown; its tasks name it as the POST that created them.
    const [before] = await postRows();
    expect(await postRows()).toEqual([
      { call_id: before!.call_id, http_status: null, charge: null, cost: null, estimated: false, tasks: 5 },
    ]);
    const [named] = await withWarehouse(h.wh.dir, (db) =>
      db.all<{ n: number }>(`SELECT count(*)::INT AS n FROM tasks WHERE run_id = $1 AND post_call_id = $2 AND state = 'unknown'`, [
        lost.runId,
        before!.call_id,
      ]),
    );
    expect(named!.n).toBe(5);

    const notes: string[] = [];
    const onProgress = (p: { kind: string; text?: string }) => void (p.kind === 'note' && notes.push(p.text!));
    const resumed = await runPipeline(
      base(h.sandbox.url, { collectTimeoutMs: 10_000, onProgress, now: ticking, sleep: async (ms: number) => clock.advance(ms) }),
    );
    expect(resumed.runId).toBe(lost.runId);
    expect(resumed.state).toBe('completed');
    expect(h.sandbox.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(2); // never bought twice
    // Priced from id_list's USD cost at the answered night's ratio: what the service charged.
    const [after] = await postRows();
    expect(after).toMatchObject({ call_id: before!.call_id, http_status: null, estimated: true, tasks: 5 });
    expect(after!.charge).toBe(`${charged}00`);
    expect(Number(after!.cost)).toBeGreaterThan(0);
    expect(notes.find((n) => n.includes('5 found by tag'))).toContain(
      `the ledger holds ${charged}00 CNY for it, estimated from id_list's USD cost`,
    );
    // Every CNY the service charged is in the ledger.
    const [sum] = await withWarehouse(h.wh.dir, (db) =>
      db.all<{ cny: string }>(`SELECT sum(charge_cny)::VARCHAR AS cny FROM ledger WHERE task_id IS NULL`),
    );
    const micros = (x: string) => Math.round(Number(x) * 1e6);
    expect(micros(sum!.cny)).toBe(h.sandbox.log.reduce((s, l) => s + micros(l.chargeCny), 0));
    // The day's account figures agree with the ledger; the estimate is listed apart, to confirm.
    const client = new ServiceClient({ baseUrl: h.sandbox.url, apiKey: 'svc_live_testresumetest', land: async () => {}, now: ticking });
    const r = await withWarehouse(h.wh.dir, (db) => reconcile(db, client));
    expect(r.discrepancies).toEqual([]);
    expect(r.estimates).toEqual([
      {
        callId: before!.call_id,
        path: '/v3/serp/engA/organic/task_post',
        amountCny: `${charged}00`,
        detail: expect.stringContaining('id_list'),
      },
    ]);
  });

  it('prices a lost POST that nothing priced when its tasks were found, once a later answered charge does, with its tasks refunds', async () => {
    h.sandbox = await startSandbox({ now: clock.now, readyAfterMs: 0 });
    const ticking = () => {
      clock.advance(1);
      return clock.now();
    };
    const timed = { now: ticking, sleep: async (ms: number) => clock.advance(ms) };
    // Depth 100: long questions find few results, and most of their charge comes back as refunds.
    const deep = parsePipeline(
      `name: resume\njobs:\n  - kind: serp\n    depth: 100\n    locations: [2840]\n    keywords: ["how long should you wait after eating before going for a run", "why do my knees hurt after running downhill on a long trail", alpha]\n`,
      'resume.yaml',
      {},
    );
    // The warehouse's first charged POST: its answer is lost, and no answered charge prices it.
    const lost = await runPipeline({ ...base(await answerDropper(h.sandbox.url), timed), pipeline: deep });
    expect(lost.stopKind).toBe('unknown');
    const found = await runPipeline({ ...base(h.sandbox.url, { ...timed, collectTimeoutMs: 10_000 }), pipeline: deep });
    expect(found.runId).toBe(lost.runId);
    expect(found.state).toBe('completed');
    const lostRow = () =>
      withWarehouse(h.wh.dir, (db) =>
        db.all<{ charge: string | null; estimated: boolean; refunds: number }>(
          `SELECT l.charge_cny::VARCHAR AS charge, l.charge_estimated AS estimated,
                  (SELECT count(*)::INT FROM ledger WHERE run_id = l.run_id AND method = 'REFUND') AS refunds
           FROM ledger AS l WHERE l.run_id = $1 AND l.path LIKE '%/task_post' AND l.task_id IS NULL`,
          [lost.runId],
        ),
      );
    expect(await lostRow()).toEqual([{ charge: null, estimated: false, refunds: 0 }]);

    // The next night's POST is answered: its charge gives the ratio that prices the lost one.
    clock.advance(86_400_000);
    const notes: string[] = [];
    const next = await runPipeline({
      ...base(h.sandbox.url, { ...timed, collectTimeoutMs: 10_000, onProgress: (p) => void (p.kind === 'note' && notes.push(p.text!)) }),
      pipeline: deep,
    });
    expect(next.state).toBe('completed');
    const posts = h.sandbox.log.filter((l) => l.path.endsWith('/task_post'));
    expect(posts).toHaveLength(2);
    expect(await lostRow()).toEqual([{ charge: `${posts[0]!.chargeCny}00`, estimated: true, refunds: 2 }]);
    expect(notes).toContain(
      `1 lost POST(s) left unpriced are now in the ledger at ${posts[0]!.chargeCny}00 CNY, estimated from id_list's USD cost (charge_estimated)`,
    );
    // The balance's rises are the refunds the ledger holds, and every charge is in it.
    const client = new ServiceClient({ baseUrl: h.sandbox.url, apiKey: 'svc_live_testresumetest', land: async () => {}, now: ticking });
    const r = await withWarehouse(h.wh.dir, (db) => reconcile(db, client));
    expect(r.discrepancies).toEqual([]);
  });
});

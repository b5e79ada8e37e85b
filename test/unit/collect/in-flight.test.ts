import { describe, expect, it } from 'vitest';
import { endpoint } from '../../../src/catalog/index.js';
import { IN_FLIGHT_MOVES, IN_FLIGHT_STATES, InFlight, type InFlightState } from '../../../src/collect/index.js';
import { TASK_MOVES, TASK_STATES } from '../../../src/warehouse/index.js';

const GET = endpoint('serp.engA.organic.task_get.advanced');
const A = 'aaaaaaaa-0000-4000-8000-000000000001';
const B = 'bbbbbbbb-0000-4000-8000-000000000002';

describe('InFlight: the one registry of tasks in flight', () => {
  it('knows an id once its POST answered, and calls it recorded once its row is committed', async () => {
    const p = new InFlight();
    const recorded: string[][] = [];
    p.onRecorded = (ids) => recorded.push([...ids]);
    p.sending(['t1', 't2'], GET);
    p.answered(
      ['t1', 't2'],
      [
        { tag: 't1', taskId: A },
        { tag: 't2', taskId: null },
      ],
    );
    expect(p.get(A)).toMatchObject({ tag: 't1', recorded: false, state: 'posted' });
    expect(p.isSettled(A)).toBe(false);
    expect(p.size).toBe(1);
    p.recorded([A, B]);
    p.recorded([A]);
    expect(recorded).toEqual([[A]]);
    expect(p.outstanding().map((t) => t.taskId)).toEqual([A]);
  });

  it('lets a callback that beats its POST answer wait for the id, and gives up on an unknown tag at once', async () => {
    const p = new InFlight();
    p.sending(['t1'], GET);
    const waiting = p.find(A, 't1', 5_000);
    const unknown = await p.find(B, 'nope', 5_000);
    expect(unknown).toBeUndefined();
    p.answered(['t1'], [{ tag: 't1', taskId: A }]);
    expect((await waiting)?.taskId).toBe(A);
  });

  it('stops waiting when the POST fails without an answer, or when the wait is over', async () => {
    const p = new InFlight();
    p.sending(['t1', 't2'], GET);
    const abandoned = p.find(A, 't1', 5_000);
    p.abandoned(['t1']);
    expect(await abandoned).toBeUndefined();
    const started = Date.now();
    expect(await p.find(B, 't2', 50)).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });

  it('each in-process state is a database state, and each in-process move is a legal database move or none', () => {
    for (const db of Object.values(IN_FLIGHT_STATES)) expect(TASK_STATES).toContain(db);
    const bad: string[] = [];
    for (const [from, tos] of Object.entries(IN_FLIGHT_MOVES) as [InFlightState, readonly InFlightState[]][]) {
      for (const to of tos) {
        const a = IN_FLIGHT_STATES[from];
        const b = IN_FLIGHT_STATES[to];
        // collected -> collected is a re-load in the table; here a settled task never moves again.
        if (a !== b && !TASK_MOVES[a].includes(b)) bad.push(`${from} (${a}) -> ${to} (${b})`);
      }
    }
    expect(bad).toEqual([]);
    // Settled is final in the process: a late duplicate body is re-loaded without moving the task back.
    expect(IN_FLIGHT_MOVES.collected).toEqual([]);
    expect(IN_FLIGHT_MOVES.failed).toEqual([]);
  });

  it('moves a task from posted to landed to collected, counts by state, and refuses an illegal move', () => {
    const p = new InFlight();
    p.sending(['t1'], GET);
    p.answered(['t1'], [{ tag: 't1', taskId: A }]);
    p.recorded([A]);
    expect(() => p.move(A, 'collected')).toThrow(/cannot move from posted to collected/);
    p.move(A, 'fetch_due');
    expect(p.inState('fetch_due').map((t) => t.taskId)).toEqual([A]);
    p.move(A, 'landed');
    expect(p.isHanded(A)).toBe(true);
    expect(p.outstanding()).toHaveLength(1);
    p.move(A, 'collected');
    expect(p.isSettled(A)).toBe(true);
    expect(p.outstanding()).toEqual([]);
    expect([p.count('collected'), p.count('landed'), p.count('fetch_due')]).toEqual([1, 0, 0]);
    // A task pull fetched, never seen here before: its row is in the table (pull found it there).
    p.move(B, 'landed');
    expect(p.get(B)).toMatchObject({ recorded: true, tag: null, get: null, state: 'landed' });
    p.move(B, 'load_failed');
    expect(p.outstanding()).toEqual([]);
    expect(p.isHanded(B)).toBe(true);
  });

  it('counts the outstanding tasks, and the landed ones among them, as the list does, leaving out tasks whose rows are not committed', () => {
    const p = new InFlight();
    const C = 'cccccccc-0000-4000-8000-000000000003';
    const agree = () => {
      const list = p.outstanding();
      expect(p.outstandingCounts()).toEqual({ outstanding: list.length, landed: list.filter((t) => t.state === 'landed').length });
    };
    p.sending(['t1', 't2', 't3'], GET);
    p.answered(
      ['t1', 't2', 't3'],
      [
        { tag: 't1', taskId: A },
        { tag: 't2', taskId: B },
        { tag: 't3', taskId: C },
      ],
    );
    agree();
    expect(p.outstandingCounts()).toEqual({ outstanding: 0, landed: 0 });
    // A postback can land before its POST's rows are committed: not outstanding until they are.
    p.move(C, 'landed');
    agree();
    p.recorded([A, B]);
    agree();
    expect(p.outstandingCounts()).toEqual({ outstanding: 2, landed: 0 });
    p.move(A, 'landed');
    p.move(B, 'fetch_due');
    agree();
    p.recorded([C]);
    agree();
    expect(p.outstandingCounts()).toEqual({ outstanding: 3, landed: 2 });
    p.move(A, 'collected');
    p.move(C, 'load_failed');
    agree();
    expect(p.outstandingCounts()).toEqual({ outstanding: 1, landed: 0 });
  });
});

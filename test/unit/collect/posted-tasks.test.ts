import { describe, expect, it } from 'vitest';
import { endpoint } from '../../../src/catalog/index.js';
import { PostedTasks } from '../../../src/collect/index.js';

const GET = endpoint('serp.engA.organic.task_get.advanced');
const A = 'aaaaaaaa-0000-4000-8000-000000000001';
const B = 'bbbbbbbb-0000-4000-8000-000000000002';

describe('PostedTasks', () => {
  it('knows an id once its POST answered, and calls it recorded once its row is committed', async () => {
    const p = new PostedTasks();
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
    expect(p.get(A)).toMatchObject({ tag: 't1', recorded: false, settled: false });
    expect(p.size).toBe(1);
    p.recorded([A, B]);
    p.recorded([A]);
    expect(recorded).toEqual([[A]]);
    expect(p.recordedIds()).toEqual([A]);
  });

  it('lets a callback that beats its POST answer wait for the id, and gives up on an unknown tag at once', async () => {
    const p = new PostedTasks();
    p.sending(['t1'], GET);
    const waiting = p.find(A, 't1', 5_000);
    const unknown = await p.find(B, 'nope', 5_000);
    expect(unknown).toBeUndefined();
    p.answered(['t1'], [{ tag: 't1', taskId: A }]);
    expect((await waiting)?.taskId).toBe(A);
  });

  it('stops waiting when the POST fails without an answer, or when the wait is over', async () => {
    const p = new PostedTasks();
    p.sending(['t1', 't2'], GET);
    const abandoned = p.find(A, 't1', 5_000);
    p.abandoned(['t1']);
    expect(await abandoned).toBeUndefined();
    const started = Date.now();
    expect(await p.find(B, 't2', 50)).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });
});

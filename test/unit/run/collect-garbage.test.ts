import { setImmediate as tick } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { collectGarbage } from '../../../src/warehouse/index.js';

describe('collectGarbage', () => {
  it('collects what nothing references any more, and keeps what is still referenced', async () => {
    let garbage: { body: string } | undefined = { body: 'x'.repeat(1 << 20) + Math.random() };
    const kept = { body: 'y'.repeat(1 << 20) + Math.random() };
    const gone = new WeakRef(garbage);
    const alive = new WeakRef(kept);
    garbage = undefined;
    // A WeakRef keeps its target until the end of the job that made it.
    await tick();
    collectGarbage();
    expect(gone.deref()).toBeUndefined();
    expect(alive.deref()).toBe(kept);
    // The second call reuses the function it found.
    expect(() => collectGarbage()).not.toThrow();
  });
});

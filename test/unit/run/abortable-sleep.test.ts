import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { abortableSleep } from '../../../src/run/abortable-sleep.js';

describe('abortableSleep', () => {
  it('holds one abort listener however many sleeps run at once, none after, and ends them all on abort', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const stop = new AbortController();
      const sleep = abortableSleep(stop.signal);
      // Thirty calls backing off together, as a night's task_get calls do under a run of 503s.
      const short = Array.from({ length: 30 }, () => sleep(5));
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1);
      await Promise.all(short);
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);

      const long = Array.from({ length: 30 }, () => sleep(60_000));
      const started = performance.now();
      stop.abort();
      await Promise.all(long);
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
      // After the abort a sleep returns at once.
      await sleep(60_000);
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

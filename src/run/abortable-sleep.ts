/**
 * A sleep that ends early when `signal` aborts, so Ctrl-C never waits out a poll or a back-off.
 * The sleeps of one sleeper share one `abort` listener, added while some sleep is under way and
 * removed when none is: a night whose calls back off together (a run of 503s at a concurrency of
 * 20) left one listener per sleep on the run's signal, and Node warned of a leak
 * (MaxListenersExceededWarning) past ten; a scheduler's signal, shared by every night, keeps none.
 */
export function abortableSleep(signal: AbortSignal | undefined): (ms: number) => Promise<void> {
  const pending = new Set<() => void>();
  const onAbort = () => {
    for (const done of [...pending]) done();
  };
  return (ms) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        pending.delete(done);
        if (pending.size === 0) signal?.removeEventListener('abort', onAbort);
        resolve();
      }
      if (pending.size === 0) signal?.addEventListener('abort', onAbort, { once: true });
      pending.add(done);
    });
}

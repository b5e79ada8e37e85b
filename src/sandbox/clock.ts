/**
 * The emulator's clock started at a given date (`pipeline sandbox --date 2026-01-01`, or
 * `PIPELINE_SANDBOX_DATE` for the built-in sandbox of a run): it reads `start` when made and
 * runs forward in real time from there, so rate-limit windows and task delays behave as
 * usual while the simulated data (ranks, volumes, result dates) are those of that day. A
 * series of nights run with successive dates sees real date changes. `realNow` is passed in
 * so tests drive it.
 *
 * @example
 * const sb = await startSandbox({ now: clockFrom(parseSandboxDate('2026-01-01')) });
 */
export function clockFrom(start: Date, realNow: () => number = Date.now): () => Date {
  const t0 = realNow();
  const at = start.getTime();
  return () => new Date(at + (realNow() - t0));
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A sandbox start date: `YYYY-MM-DD` (midnight UTC) or an ISO instant with its offset
 * (`2026-01-01T02:00:00Z`). Anything else throws, naming what is accepted.
 */
export function parseSandboxDate(text: string): Date {
  const s = text.trim();
  const d = DAY.test(s) ? new Date(`${s}T00:00:00Z`) : INSTANT.test(s) ? new Date(s) : null;
  // A day that does not exist (2026-02-30) comes back as another day; refuse it too.
  if (!d || Number.isNaN(d.getTime()) || (DAY.test(s) && d.toISOString().slice(0, 10) !== s)) {
    throw new Error(
      `sandbox date '${text}' is not a date: give YYYY-MM-DD (midnight UTC) or an ISO instant with its offset, e.g. 2026-01-01 or 2026-01-01T02:00:00Z`,
    );
  }
  return d;
}

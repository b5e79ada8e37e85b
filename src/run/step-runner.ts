import { performance } from 'node:perf_hooks';
import { killPoint } from './kill-point.js';

/**
 * One step of a run: its name, when it runs, and what it does. `when` is a predicate on the
 * run's context: `true` runs the step; a string skips it, recorded in the journal as
 * `skipped: <why>`; `false` leaves it owed (nothing recorded: a later invocation does it).
 */
export interface Step<C> {
  name: string;
  when: (c: C) => boolean | string;
  run: (c: C) => Promise<void>;
  /**
   * Who records the step in the run's journal (`run_steps`): `runner` (started, then done),
   * `self` (the step writes its own record, as the ingest does with the run's end state: timed,
   * always run), or `none` (a bookkeeping step: not journaled, not timed).
   */
  journal?: 'runner' | 'self' | 'none';
  /** Memory is handed back before it runs (the steps before it leave theirs behind). */
  handBack?: boolean;
  /** Runs even when its journal records it done (its outcome is needed), without recording it again. */
  always?: boolean;
  /** What the journal keeps with the step when it starts (the lake's address). */
  detail?: (c: C) => string | null;
  /** Whether the step is done once it ran (the lake: only when every file is up). */
  done?: (c: C) => boolean;
}

/** What the runner needs of a run: its journal, its clock for the timings, and how to hand memory back. */
export interface StepHooks<C> {
  owes: (c: C, step: string) => boolean;
  started: (c: C, step: string, detail: string | null) => Promise<void>;
  done: (c: C, step: string, detail?: string) => Promise<void>;
  time: <T>(step: string, fn: () => Promise<T>) => Promise<T>;
  handBack: (c: C) => Promise<void>;
}

/**
 * Runs the steps in order (without hooks, only steps that are not journaled): each that is owed and whose `when` holds is killed at
 * `<name>:start` under the kill matrix (kill-point.ts), recorded started, timed (memory handed
 * back first where it asks), and recorded done; a skipped step is recorded done as skipped.
 */
export async function runSteps<C>(steps: readonly Step<C>[], c: C, h?: StepHooks<C>): Promise<void> {
  for (const s of steps) await runStep(s, c, h);
}

async function runStep<C>(s: Step<C>, c: C, hooks: StepHooks<C> | undefined): Promise<void> {
  const mode = s.journal ?? 'runner';
  if (mode === 'none') {
    if (s.when(c) === true) await s.run(c);
    return;
  }
  if (!hooks) throw new Error(`step ${s.name} is journaled: runSteps needs the run's hooks`);
  const h = hooks;
  const work = async () => {
    if (s.handBack) await h.handBack(c);
    await s.run(c);
  };
  if (mode === 'self') {
    await h.time(s.name, async () => {
      killPoint(s.name, 'start');
      await work();
    });
    return;
  }
  const owes = h.owes(c, s.name);
  const when = s.when(c);
  if (typeof when === 'string') {
    if (owes) await h.done(c, s.name, `skipped: ${when}`);
    return;
  }
  if (!when || (!owes && !s.always)) return;
  if (owes) {
    killPoint(s.name, 'start');
    await h.started(c, s.name, s.detail?.(c) ?? null);
  }
  await h.time(s.name, work);
  if (owes && (s.done?.(c) ?? true)) await h.done(c, s.name);
}

/** Times steps: each one's wall milliseconds and the process's peak RSS when it ended, logged and kept. */
export function stepTimer(onStep: (step: string) => void, log: () => { info: (o: object, msg: string) => void }) {
  const ms: Record<string, number> = {};
  const peakMb: Record<string, number> = {};
  const time = async <T>(step: string, fn: () => Promise<T>): Promise<T> => {
    onStep(step);
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      ms[step] = Math.round(performance.now() - t0);
      peakMb[step] = Math.round(process.resourceUsage().maxRSS / 1024);
      log().info({ step, ms: ms[step], peakMb: peakMb[step] }, 'step done');
    }
  };
  return { ms, peakMb, time };
}

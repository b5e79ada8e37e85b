import type { Logger } from 'pino';
import { loadPipeline, resolveLake } from '../config/index.js';
import { RunStore, withWarehouse } from '../warehouse/index.js';
import { RESUME_WITHIN_MS, runExitCode, runPipeline, runScheduledNight, type RunOptions } from '../run/index.js';
import { INTERRUPTED } from './schedule-journal.js';
import type { ScheduledPipeline, SchedulerOptions } from './scheduler.js';

/** Where a scheduled night's calls go; `close` ends a built-in sandbox started for it. */
export interface NightTarget {
  baseUrl: string;
  apiKey: string;
  close?: () => Promise<void>;
  /** Seconds between `tasks_ready` polls suited to the target (the built-in sandbox is fast). */
  pollIntervalMs?: number;
}

/**
 * The scheduler's `run`: each tick re-reads the pipeline file (an edit takes effect the next
 * night), opens the service target, and runs the same sequence as `pipeline run` (models,
 * clusters and publishing included), finishing an earlier unfinished run first.
 */
export function nightRunner(o: {
  warehouseDir: string;
  log: Logger;
  target: () => Promise<NightTarget>;
  /** `--lake` of `pipeline schedule`; else PIPELINE_LAKE, else each file's `lake:`. */
  lakeFlag?: string;
  /** Anything else a run takes (a clock, a dispatcher, the models' folder); tests pass these. */
  extra?: Partial<RunOptions>;
}): SchedulerOptions['run'] {
  return async (p: ScheduledPipeline, signal: AbortSignal, how: { finishOnly?: boolean } = {}) => {
    const pipeline = await loadPipeline(p.file);
    if (how.finishOnly) {
      // Only a run of this night left unfinished (its journal owes a step, the lake included): one
      // that ended after all (between its end and the journal's line) is not bought again.
      const at = (o.extra?.now ?? (() => new Date()))().getTime();
      const open = await withWarehouse(o.warehouseDir, (wh) => RunStore.unfinishedRuns(wh, pipeline.name));
      if (!open.some((r) => at - r.startedAt.getTime() < RESUME_WITHIN_MS))
        return { runId: '', state: 'nothing to finish: the run had ended', exitCode: 0 };
    }
    const target = await o.target();
    try {
      const s = await (how.finishOnly ? runPipeline : runScheduledNight)({
        pipeline,
        file: p.file,
        warehouseDir: o.warehouseDir,
        baseUrl: target.baseUrl,
        apiKey: target.apiKey,
        logger: o.log,
        signal,
        pollIntervalMs: target.pollIntervalMs ?? 30_000,
        lake: resolveLake({ flag: o.lakeFlag, env: process.env, pipeline }),
        ...o.extra,
      });
      o.log.info({ pipeline: p.name, runId: s.runId, state: s.state, chargedCny: s.chargedCny, models: s.models }, 'scheduled run done');
      const exitCode = runExitCode(s);
      if (s.completedWhileWaiting)
        return { runId: s.runId, state: 'completed by the run that held the warehouse; nothing bought', exitCode };
      // "interrupted": the scheduler was stopped while this run worked; its next start finishes it (Scheduler.startUp).
      const interrupted = s.stopKind === 'interrupted' ? `, ${INTERRUPTED}` : '';
      // "lake behind": bought, loaded and published; the next tick (or `pipeline lake sync`) syncs it first, buying nothing.
      const behind = s.lakeBehind ? ', lake behind' : '';
      return { runId: s.runId, state: `${s.state}${interrupted}${s.models && !s.models.ok ? ', models failed' : ''}${behind}`, exitCode };
    } finally {
      await target.close?.();
    }
  };
}

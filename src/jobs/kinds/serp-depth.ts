import { z } from 'zod';

/**
 * The `depth` of a SERP job: a number of results, or `auto`, where each series' depth comes
 * from what the warehouse knows of it (src/plan/auto-depth.ts), tuned by `auto_depth`.
 */

/** The most tracked domains an `auto` job follows: each can raise a series' depth. */
export const AUTO_TRACKED_MAX = 10;

const DEPTH_DOC =
  "Results per SERP, 1 to 700 (default 10, as the service; above 10, each further block of 10 adds charges, unused blocks are refunded), or `auto`: each keyword × location × language × device × engine gets the depth its tracked domains need, from the warehouse's rank_history: a tracked domain seen at the series' last check at rank r → ceil((r + margin)/10)×10 (`auto:seen`, the deepest of the domains, at most max_depth); none seen → the first 10 (`auto:shallow`); never looked at max_depth, or its sweep night (one night in sweep_every, spread by a hash of the series) → max_depth (`auto:sweep`); after collection, a series where a domain seen at the last check is absent within tonight's depth is bought again at max_depth the same night (`auto:escalation`, once). Needs `track_domains` (up to 10) and an organic type; the reason is kept on each task (tasks.depth_reason).";

export const depthSchema = z
  .union([
    z.number().int('a whole number').min(1, 'at least 1').max(700, 'at most 700'),
    z.literal('auto', { error: "a number of results, 1 to 700, or 'auto'" }),
  ])
  .default(10)
  .describe(DEPTH_DOC);

/** `auto_depth` with its defaults filled. */
export type AutoDepth = { max_depth: number; margin: number; sweep_every: number };

/**
 * The defaults of `auto_depth`. A small margin buys the fewest pages: a domain that falls past
 * tonight's depth is bought again at max_depth the same night (`auto:escalation`), so nothing seen
 * the night before is missed, and the margin only trades escalations against depth. The sweep
 * interval bounds the nights an entry beyond the bought depth goes unseen, and its sweeps at
 * max_depth are most of what an auto night costs (bench/depth.ts, docs/performance.md).
 */
export const AUTO_DEPTH_DEFAULTS: Readonly<AutoDepth> = { max_depth: 100, margin: 2, sweep_every: 14 };

export const autoDepthSchema = z
  .strictObject({
    max_depth: z
      .number()
      .int('a whole number')
      .min(10, 'at least 10')
      .max(700, 'at most 700')
      .multipleOf(10, 'a multiple of 10')
      .default(AUTO_DEPTH_DEFAULTS.max_depth)
      .describe('The full look: the depth of a sweep and of an escalation (default 100).'),
    margin: z
      .number()
      .int('a whole number')
      .min(0, 'at least 0')
      .max(700, 'at most 700')
      .default(AUTO_DEPTH_DEFAULTS.margin)
      .describe("Results past the last check's rank of a tracked domain, before rounding up to a block of 10 (default 2)."),
    sweep_every: z
      .number()
      .int('a whole number')
      .min(1, 'at least 1')
      .max(366, 'at most 366')
      .default(AUTO_DEPTH_DEFAULTS.sweep_every)
      .describe(
        'A full look every N nights per series, spread so about 1/N of the series sweep each night (default 14): a tracked domain entering beyond the bought depth is seen within N nights.',
      ),
  })
  .optional()
  .describe('How `depth: auto` chooses; only with `depth: auto`. Defaults: max_depth 100, margin 2, sweep_every 14.');

/** The settings of an `auto` job, defaults filled. */
export function autoDepthOf(job: { auto_depth?: Partial<AutoDepth> | undefined }): AutoDepth {
  return { ...AUTO_DEPTH_DEFAULTS, ...job.auto_depth };
}

/** `depth: auto` needs tracked domains (at most 10) and an organic SERP; `auto_depth` needs `depth: auto`. */
export function checkAutoDepth(
  job: { depth?: unknown; auto_depth?: unknown; track_domains?: unknown; type?: unknown },
  ctx: z.RefinementCtx,
): void {
  if (typeof job !== 'object' || job === null) return;
  if (job.depth !== 'auto') {
    if (job.auto_depth !== undefined)
      ctx.addIssue({ code: 'custom', path: ['auto_depth'], message: 'auto_depth is read only with depth: auto' });
    return;
  }
  const tracked = Array.isArray(job.track_domains) ? job.track_domains : [];
  if (tracked.length === 0)
    ctx.addIssue({
      code: 'custom',
      path: ['track_domains'],
      message: 'depth: auto needs track_domains: the domains whose ranks choose the depth',
    });
  if (tracked.length > AUTO_TRACKED_MAX)
    ctx.addIssue({ code: 'custom', path: ['track_domains'], message: `depth: auto follows at most ${AUTO_TRACKED_MAX} tracked domains` });
  if (job.type !== undefined && job.type !== 'organic')
    ctx.addIssue({ code: 'custom', path: ['depth'], message: 'depth: auto is for organic SERPs (rank_history holds organic checks only)' });
}

import { z } from 'zod';

/**
 * The `depth` of a SERP job: a number of results, or `auto`, where each series' depth comes
 * from what the warehouse knows of it (src/plan/auto-depth.ts), tuned by `auto_depth`.
 */

/** The most tracked domains an `auto` job follows: each can raise a series' depth. */
export const AUTO_TRACKED_MAX = 10;

const DEPTH_DOC =
  "Results per SERP, 1 to 700 (default 10, as the service; above 10, each further block of 10 adds charges, unused blocks are refunded), or `auto`: each keyword × location × language × device × engine gets the depth its tracked domains need, from the warehouse's rank_history: a tracked domain seen at the series' last check at rank r → ceil((r + margin)/10)×10 (`auto:seen`, the deepest of the domains, at most max_depth); none seen → the first 10 (`auto:shallow`); never looked at max_depth, or its sweep night (one night in sweep_every, spread by a hash of the series) → max_depth (`auto:sweep`); after collection, a series where a domain seen at the last check is absent within tonight's depth is bought again at max_depth the same night (`auto:escalation`, once). Competitors listed in `auto_depth.competitors` are followed to competitor_depth instead (their rank raises the depth, and their fall is bought again, only to it). Needs `track_domains` (up to 10) and an organic type; the reason is kept on each task (tasks.depth_reason).";

export const depthSchema = z
  .union([
    z.number().int('a whole number').min(1, 'at least 1').max(700, 'at most 700'),
    z.literal('auto', { error: "a number of results, 1 to 700, or 'auto'" }),
  ])
  .default(10)
  .describe(DEPTH_DOC);

/** `auto_depth` with its defaults filled. */
export type AutoDepth = {
  max_depth: number;
  margin: number;
  sweep_every: number;
  /** Tracked domains followed only to competitor_depth (the others are followed to max_depth). */
  competitors: readonly string[];
  competitor_depth: number;
};

/**
 * The defaults of `auto_depth`. A small margin buys the fewest pages: a domain that falls past
 * tonight's depth is bought again at max_depth the same night (`auto:escalation`), so nothing seen
 * the night before is missed, and the margin only trades escalations against depth. The sweep
 * interval bounds the nights an entry beyond the bought depth goes unseen, and its sweeps at
 * max_depth are most of what an auto night costs (bench/depth.ts, docs/performance.md).
 */
export const AUTO_DEPTH_DEFAULTS: Readonly<AutoDepth> = {
  max_depth: 100,
  margin: 2,
  sweep_every: 14,
  competitors: [],
  competitor_depth: 30,
};

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
    competitors: z
      .array(z.string())
      .default([])
      .describe(
        "Tracked domains that are competitors, followed only to competitor_depth: a competitor's rank at the last check raises tonight's depth, and its fall past tonight's depth buys the escalation, only when that rank was within competitor_depth. Beyond it, a competitor is measured on sweep nights and wherever your own domains' depth reaches. Each must be in track_domains; the tracked domains not listed are followed to max_depth (default: none listed, every tracked domain followed to max_depth).",
      ),
    competitor_depth: z
      .number()
      .int('a whole number')
      .min(10, 'at least 10')
      .max(700, 'at most 700')
      .multipleOf(10, 'a multiple of 10')
      .optional()
      .describe('How deep the competitors are followed between sweeps (default 30, or max_depth when that is less).'),
  })
  .optional()
  .describe(
    'How `depth: auto` chooses; only with `depth: auto`. Defaults: max_depth 100, margin 2, sweep_every 14, no competitors, competitor_depth 30.',
  );

/** The settings of an `auto` job, defaults filled. */
export function autoDepthOf(job: { auto_depth?: Partial<AutoDepth> | undefined }): AutoDepth {
  const s = { ...AUTO_DEPTH_DEFAULTS, ...job.auto_depth };
  // Not written: 30, or max_depth when that is less (written deeper than max_depth is refused).
  return { ...s, competitor_depth: job.auto_depth?.competitor_depth ?? Math.min(AUTO_DEPTH_DEFAULTS.competitor_depth, s.max_depth) };
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
  checkCompetitors(job.auto_depth, tracked, ctx);
}

/** Each competitor is a tracked domain; competitor_depth is at most max_depth. */
function checkCompetitors(settings: unknown, tracked: readonly unknown[], ctx: z.RefinementCtx): void {
  if (typeof settings !== 'object' || settings === null) return;
  const s = settings as Partial<Record<keyof AutoDepth, unknown>>;
  if (Array.isArray(s.competitors))
    s.competitors.forEach((d, i) => {
      if (!tracked.includes(d))
        ctx.addIssue({
          code: 'custom',
          path: ['auto_depth', 'competitors', i],
          message: `'${String(d)}' is not in track_domains; a competitor must be one of the tracked domains (${tracked.join(', ')})`,
        });
    });
  const max = typeof s.max_depth === 'number' ? s.max_depth : AUTO_DEPTH_DEFAULTS.max_depth;
  if (typeof s.competitor_depth === 'number' && s.competitor_depth > max)
    ctx.addIssue({
      code: 'custom',
      path: ['auto_depth', 'competitor_depth'],
      message: `competitor_depth ${s.competitor_depth} is deeper than max_depth ${max}; at most ${max}`,
    });
}

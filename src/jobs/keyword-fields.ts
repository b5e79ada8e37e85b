import { z } from 'zod';

/** Keyword lists, keyword files and packing sizes: the keyword blocks of the job kinds, declared once. */

/** A file of keywords next to the pipeline file: `.txt` one a line, `.csv` a `keyword` column (else the first). */
export const keywordsFileSchema = z
  .string()
  .regex(/\.(txt|csv)$/i, 'a .txt (one keyword a line) or .csv file')
  .optional()
  .describe(
    "Keywords from a file, relative to the pipeline file: .txt one a line, .csv the `keyword` column (else the first column); added to `keywords`. A regular file of at most 10 MB, inside the pipeline file's folder unless `keywords_file_outside` is true.",
  );

/** Lets `keywords_file` name a file outside the pipeline file's folder (or a symlink leading out of it). */
export const keywordsFileOutsideSchema = z
  .boolean()
  .optional()
  .describe(
    "true to let `keywords_file` name a file outside the pipeline file's folder (by path or through a symlink). Off by default, so a pipeline file cannot make a run read, and buy tasks for, any file the user can read.",
  );

/** One keyword of at most `max` characters, not blank. */
export function keywordSchema(max: number) {
  return z
    .string()
    .max(max, `at most ${max} characters`)
    .refine((s) => s.trim().length > 0, { error: 'must not be empty' });
}

/** A keyword list of a data kind (at most `max` characters each), empty by default. */
export function keywordList(max: number) {
  return z
    .array(keywordSchema(max))
    .default([])
    .describe(`Keywords (at most ${max} characters each); lower-cased and de-duplicated by the planner.`);
}

/** How many keywords the planner packs into one task, `dflt` unless set. */
export function keywordsPerTask(max: number, dflt: number, what: string) {
  return z
    .number()
    .int('a whole number')
    .min(1, 'at least 1')
    .max(max, `at most ${max}`)
    .default(dflt)
    .describe(`Keywords packed into one task (${what}); default ${dflt}.`);
}

/** Keywords inline, from a file, or both; a job with neither has nothing to do. */
export function requireKeywords(job: { keywords?: unknown; keywords_file?: unknown }, ctx: z.RefinementCtx): void {
  const inline = Array.isArray(job.keywords) ? job.keywords.length : 0;
  if (inline === 0 && typeof job.keywords_file !== 'string') {
    ctx.addIssue({ code: 'custom', path: ['keywords'], message: 'at least one keyword, or a keywords_file' });
  }
}

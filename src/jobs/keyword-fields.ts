import { z } from 'zod';

/** Keyword lists, keyword files and packing sizes: the keyword blocks of the job kinds, declared once. */

/** A file of keywords next to the pipeline file: `.txt` one a line, `.csv` a `keyword` column (else the first). */
export const keywordsFileSchema = z
  .string()
  .regex(/\.(txt|csv)$/i, 'a .txt (one keyword a line) or .csv file')
  .optional()
  .describe(
    "Keywords from a file, relative to the pipeline file: .txt one a line (a line of `#` alone or followed by a space is a comment; `#hashtag` is a keyword), .csv the column headed keyword (or keywords, kw, query, search term, search keyword, phrase), else the first column of a file without a header (a header naming no such column is refused); added to `keywords`. A regular file of at most 10 MB, inside the pipeline file's folder unless `keywords_file_outside` is true.",
  );

/** Lets `keywords_file` name a file outside the pipeline file's folder (or a symlink leading out of it). */
export const keywordsFileOutsideSchema = z
  .boolean()
  .optional()
  .describe(
    "true to let `keywords_file` name a file outside the pipeline file's folder (by path or through a symlink). Off by default, so a pipeline file cannot make a run read, and buy tasks for, any file the user can read.",
  );

/**
 * Characters a keyword may have, by job kind, where it is not 700 (the SERP and labs rule):
 * the kinds' own keyword lists say the same, and a keywords file is held to it too.
 */
const KEYWORD_MAX_CHARS: Readonly<Record<string, number>> = {
  search_volume: 80,
  ad_traffic: 80,
  keywords_for_keywords: 80,
  trends: 100,
  ai_volume: 250,
};

/** Most characters (code points) a keyword of a job of `kind` may have. */
export function keywordMaxChars(kind: string): number {
  return KEYWORD_MAX_CHARS[kind] ?? 700;
}

/** One keyword of at most `max` characters, not blank, with nothing in it a person cannot see or read (keywordProblem). */
export function keywordSchema(max: number) {
  return z
    .string()
    .max(max, `at most ${max} characters`)
    .superRefine((s, ctx) => {
      const problem = keywordProblem(s);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });
}

/** Bidirectional embedding, override and isolate controls: they change how the text around them displays. */
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069]/;

/**
 * Why a keyword cannot be bought as written, or undefined: blank (also when it holds only
 * invisible characters, such as a zero-width space), a control character (NUL, a tab, a line
 * feed: U+0000 to U+001F, U+007F to U+009F), or a bidirectional control (U+202A to U+202E,
 * U+2066 to U+2069), which makes a keyword display as another. Joiners and direction marks
 * within a word (Persian, Hindi, emoji) are kept.
 */
export function keywordProblem(s: string): string | undefined {
  if (s.replace(/[\s\p{Cf}]/gu, '') === '')
    return s.trim() === '' ? 'must not be empty' : 'must not be empty (it holds only invisible characters)';
  const control = /[\u0000-\u001f\u007f-\u009f]/.exec(s) ?? BIDI_CONTROL.exec(s);
  if (!control) return undefined;
  const code = `U+${control[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  return BIDI_CONTROL.test(control[0])
    ? `holds a bidirectional control character (${code}), which makes it display as another text; remove it`
    : `holds a control character (${code}); remove it`;
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

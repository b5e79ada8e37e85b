import { dirname, resolve } from 'node:path';
import { ConfigError, type ConfigIssue } from '../errors.js';
import type { Env } from './env.js';
import { readKeywordsFileFromDisk, readKeywordsFiles } from './keywords-file.js';
import { parsePipeline } from './parse.js';
import { InvalidUtf8Error, readUtf8Strict } from './read-utf8.js';
import type { Pipeline } from './schema.js';

/** What `loadPipeline` reads from; tests pass their own instead of touching the disk. */
export interface LoadPipelineOptions {
  /** Fills `${NAME}` references; defaults to `process.env`. */
  env?: Env;
  /** Reads the file as UTF-8 text; defaults to a strict read that refuses bytes that are not UTF-8. */
  readFile?: (path: string) => Promise<string>;
}

/** A validated pipeline and the file it came from (as given), for messages and run records. */
export type LoadedPipeline = Pipeline & { file: string };

/**
 * Reads, parses and validates a pipeline file. An unreadable file is a `ConfigError`
 * too, so the CLI has one exit path (exit code 2) for every bad input.
 *
 * @example
 * const p = await loadPipeline('pipelines/keywords.yaml');
 * p.jobs[0].depth; // 10 when the file leaves it out
 */
export async function loadPipeline(file: string, opts: LoadPipelineOptions = {}): Promise<LoadedPipeline> {
  const read = opts.readFile ?? readUtf8Strict;
  let text: string;
  try {
    text = await read(file);
  } catch (err) {
    if (err instanceof InvalidUtf8Error)
      throw new ConfigError([{ file, line: err.line, column: err.column, field: '', rule: err.message }]);
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : `cannot read the file: ${(err as Error).message}`;
    throw new ConfigError([{ file, line: 1, column: 1, field: '', rule: reason }]);
  }
  const pipeline = parsePipeline(text, file, opts.env ?? process.env);
  // From disk, a keywords file must be a regular file of bounded size in the pipeline's folder.
  const readKeywords = opts.readFile ?? readKeywordsFileFromDisk;
  const { jobs, issues } = await readKeywordsFiles(pipeline.jobs, file, readKeywords);
  if (issues.length) throw new ConfigError(issues);
  const tooMany = serpTasksOverLimit(jobs, file);
  if (tooMany.length) throw new ConfigError(tooMany);
  return { ...pipeline, jobs, file };
}

/**
 * The most SERP tasks one pipeline file may expand into. A night's plan holds every task in
 * memory, and a keywords file within its size limit crossed with a few locations and devices
 * would run the planner out of memory (docs/performance.md).
 */
export const MAX_SERP_TASKS = 1_000_000;

/** A SERP job's cross product (keywords × engines × devices × locations × languages), refused past MAX_SERP_TASKS, before anything is planned. */
function serpTasksOverLimit(jobs: LoadedPipeline['jobs'], file: string): ConfigIssue[] {
  let total = 0;
  const issues: ConfigIssue[] = [];
  for (const [i, job] of jobs.entries()) {
    if (job.kind !== 'serp') continue;
    const n = [
      job.keywords?.length ?? 0,
      job.engines?.length ?? 1,
      job.devices?.length ?? 1,
      job.locations.length,
      job.languages?.length ?? 1,
    ].reduce((a, b) => a * b, 1);
    total += n;
    if (total > MAX_SERP_TASKS)
      issues.push({
        file: job.keywords_file ? resolve(dirname(file), job.keywords_file) : file,
        line: 1,
        column: 1,
        field: `jobs[${i}]`,
        rule: `expands to ${n.toLocaleString('en-US')} SERP tasks (keywords × engines × devices × locations × languages)${total > n ? `, ${total.toLocaleString('en-US')} with the jobs before it` : ''}; at most ${MAX_SERP_TASKS.toLocaleString('en-US')} a pipeline: split the keywords over several pipeline files`,
      });
  }
  return issues.slice(0, 1);
}

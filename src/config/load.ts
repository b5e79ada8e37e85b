import { ConfigError } from '../errors.js';
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
  return { ...pipeline, jobs, file };
}

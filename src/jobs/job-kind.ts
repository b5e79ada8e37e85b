import type { z } from 'zod';
import type { JobSpecs } from './expand.js';

/** A job as the planner and the run see it: the schema's output with its name filled in. */
export type Named<T> = T & { name: string };

/** What a crawl job reads once its crawl is finished. */
export interface CrawlReads {
  read: readonly ('pages' | 'links' | 'resources')[];
  maxItems: number;
  pageSize?: number;
}

/**
 * How a kind's tasks come back when the ready list does not serve them: a crawl is
 * watched and then read (on-page). Kinds without it are collected by pull or push
 * (queued tasks) or answered at once (live).
 */
export interface CrawlCollection<J> {
  /** The catalog id of the `task_post` whose tasks are crawls. */
  postEndpoint: string;
  /** What to read of one job's crawls. */
  reads(job: J): CrawlReads;
  /** What to read of crawls whose job is no longer in the file. */
  defaultReads: CrawlReads;
}

/**
 * One job kind, whole: its schema (the source of the config union, the JSON Schema and the
 * field docs), its expansion into task bodies, and how it is collected when special. The
 * registry (`registry.ts`) builds the union and the planner's dispatch from these.
 */
export interface JobKind<K extends string = string, S extends z.ZodObject = z.ZodObject> {
  kind: K;
  schema: S;
  /** The task bodies of one job, checked against the catalog's request rules later. */
  expand(job: Named<z.output<S>>): JobSpecs;
  /** Set when the kind's tasks are crawls, watched and read rather than pulled. */
  crawl?: CrawlCollection<Named<z.output<S>>>;
}

/** Declares a job kind; the identity function that gives `expand` its job type. */
export function defineJobKind<K extends string, S extends z.ZodObject>(kind: JobKind<K, S>): JobKind<K, S> {
  return kind;
}

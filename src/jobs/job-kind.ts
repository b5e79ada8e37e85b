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

/** A place in the pipeline file: the path of a field under the file's root (`['jobs', 2, 'models', 0]`). */
export type FieldPath = (string | number)[];

/** A job field the service's reference lists refuse, and the rule, for a config error with file and line. */
export interface PreflightIssue {
  path: FieldPath;
  rule: string;
}

/**
 * Reads a free reference list of the service (an endpoint of the catalog, by id) and gives
 * its result items; each list is read once per run, and only when a job asks for it.
 */
export type ReadReference = (endpointId: string) => Promise<unknown[]>;

/** What a kind's preflight found: fields to refuse (nothing is bought then), and warnings (the service decides). */
export interface PreflightResult {
  issues: PreflightIssue[];
  warnings: string[];
}

/**
 * What a job that embeds keywords asks for: the model, the vector size its cache is keyed by,
 * the size asked of the service, and the keywords per call.
 */
export interface EmbedSpec {
  model: string;
  dimensions: number;
  requestDimensions: number;
  batchSize: number;
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
  /**
   * Checks the kind's jobs (each with its index in the file's `jobs`) against the service's
   * free reference lists before anything is bought: what the service would refuse only after
   * the other tasks were paid for (a model it does not offer, a location its list lacks).
   */
  preflight?(jobs: readonly { at: number; job: Named<z.output<S>> }[], read: ReadReference): Promise<PreflightResult>;
  /**
   * Set when the kind's jobs buy no task of their own but embed the keywords the other jobs
   * collected, after collection, and cluster them: the run's embed and cluster steps, and the
   * plan's price, take their jobs from this.
   */
  embeds?(job: Named<z.output<S>>): EmbedSpec;
}

/** Declares a job kind; the identity function that gives `expand` its job type. */
export function defineJobKind<K extends string, S extends z.ZodObject>(kind: JobKind<K, S>): JobKind<K, S> {
  return kind;
}

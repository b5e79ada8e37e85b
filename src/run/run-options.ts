import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { RateLimiterOptions } from '../client/index.js';
import type { LandingSlots } from '../collect/index.js';
import type { CollectionOverrides, Pipeline } from '../config/index.js';
import type { RunProgress } from './progress.js';

/** How long after its start an unfinished run is resumed by the next `pipeline run`, rather than settled: half a day. */
export const RESUME_WITHIN_MS = 12 * 3_600_000;

/** What a run reports while it works (the CLI renders it); `collect` events come while posting too. */
export type ProgressEvent = { kind: 'note'; text: string } | ({ kind: 'collect' } & RunProgress);

/** Everything one run of a pipeline needs: the world (clock, dispatcher, signal) is passed in. */
export interface RunOptions {
  pipeline: Pipeline;
  file: string;
  warehouseDir: string;
  baseUrl: string;
  apiKey: string;
  logger: Logger;
  /** Start a new run even when the last run of this pipeline is unfinished. */
  newRun?: boolean;
  pollIntervalMs?: number;
  /** Overrides the pipeline's `collection.deadline_minutes`. */
  collectTimeoutMs?: number;
  /** Overrides of the pipeline's `collection` block (mode, listen address, public URL). */
  collection?: Omit<CollectionOverrides, 'deadlineMs'>;
  /** Secret of this process's callback URLs; random by default (tests fix it to reach the server). */
  callbackSecret?: string;
  /** Landing slots of the callback server and how long a body waits for one; the server's defaults unless given (tests make them small). */
  callbackLanding?: LandingSlots;
  limits?: RateLimiterOptions;
  dispatcher?: Dispatcher;
  /** Aborting stops posting and collecting; calls in flight finish and state is saved. */
  signal?: AbortSignal;
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
  /** Progress for people; the outcome is returned, not printed. */
  onProgress?: (e: ProgressEvent) => void;
  /** Told the run's id as soon as it is known: a new run's, or the unfinished one it resumes. */
  onRunId?: (runId: string) => void;
  /** Build and test the SQL models after loading (default true; `--no-models`). */
  models?: boolean;
  /**
   * Evaluate and deliver the pipeline's `alerts:` (default true). Tests that script a rank move
   * between loading and the models turn it off and call `alertStep` themselves.
   */
  alerts?: boolean;
  /** The models' folder (default: the `sql/` shipped with the tool). */
  sqlDir?: string;
  /** `s3://bucket/prefix` to mirror the published layout to (checked before anything is bought). */
  lake?: string;
  /** Environment with the AWS variables for the lake; default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

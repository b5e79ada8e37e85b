import cron from 'node-cron';
import { z } from 'zod';
import { alertsSchema } from './alerts-block.js';
import { collectionSchema } from './collection.js';
import { jobSchema } from '../jobs/index.js';
import { lakeUrlSchema } from './lake.js';

/** Every job kind, told apart by `kind`: built by the job kinds' registry (src/jobs). */
export { jobSchema };

/** Fills each job's default name; the index is the job's place in `jobs` (0-based, as in `jobs[0]`). */
function nameJobs<J extends { kind: string; name?: string | undefined }>(jobs: J[]): Array<J & { name: string }> {
  return jobs.map((job, index) => ({ ...job, name: job.name ?? `${job.kind}-${index}` }));
}

/**
 * Job names key the ledger and the warehouse, so two jobs of one pipeline may not share
 * one. Runs even when some jobs are invalid (reported together), so it reads defensively.
 */
function checkUniqueNames(jobs: unknown[], ctx: z.RefinementCtx): void {
  if (!Array.isArray(jobs)) return;
  const seen = new Map<string, number>();
  jobs.forEach((job, index) => {
    if (typeof job !== 'object' || job === null) return;
    const { kind, name } = job as { kind?: unknown; name?: unknown };
    const named = typeof name === 'string' ? name : `${String(kind)}-${index}`;
    const first = seen.get(named);
    if (first === undefined) seen.set(named, index);
    else ctx.addIssue({ code: 'custom', path: [index, 'name'], message: `job name '${named}' is already used by jobs[${first}]` });
  });
}

/**
 * A pipeline file: which data to buy, and how much to spend at most. The single source
 * of the `Pipeline` types, the editor JSON Schema and the field docs (`.describe`).
 */
export const pipelineSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]*$/, 'lower-case letters, digits, - and _, starting with a letter or digit')
      .max(64, 'at most 64 characters')
      .describe('Pipeline name; it keys runs, the ledger and task tags, so renaming starts a new history.'),
    description: z.string().optional().describe('Free text for people; not used by the tool.'),
    budget_cny: z
      .number()
      .positive('a positive number of CNY')
      .optional()
      .describe(
        "Spending cap of one run in CNY, net of the refunds collected: the run buys up to it and then stops posting (a batch that would pass it is bought in part, as many tasks as fit), pricing each task by what its endpoint was charged before (in this run, else in earlier ones; before refunds, per unit of SERP depth: a depth-200 task is 15.25 depth-10 ones); an endpoint never bought yet is priced by buying one task alone first, so a first run can pass the cap by that one task's charge at most.",
      ),
    schedule: z
      .string()
      .refine((s) => cron.validate(s), {
        error: "a cron expression: minute hour day-of-month month day-of-week, e.g. '0 3 * * *' for 03:00 every day",
      })
      .optional()
      .describe('When `pipeline schedule` runs this pipeline: a cron expression in `timezone`.'),
    timezone: z
      .string()
      .refine(isTimeZone, { error: "an IANA time zone such as 'UTC' or 'Europe/London'" })
      .default('UTC')
      .describe('Time zone of `schedule` (IANA name). Default UTC.'),
    collection: collectionSchema.prefault({}),
    lake: lakeUrlSchema.optional(),
    alerts: alertsSchema.optional(),
    jobs: z
      .array(jobSchema)
      .min(1, 'at least one job')
      .superRefine(checkUniqueNames, { when: () => true })
      .transform(nameJobs)
      .describe('What to collect. Each job has a `kind`; its fields depend on the kind.'),
  })
  .describe('A pipeline file: what to buy from the search-data service and where it goes.');

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** A pipeline as written: optional fields may be left out. */
export type PipelineInput = z.input<typeof pipelineSchema>;
/** A pipeline after validation: every default filled, every job named. */
export type Pipeline = z.output<typeof pipelineSchema>;
/** One job of a resolved pipeline. */
export type Job = Pipeline['jobs'][number];
/** One SERP job of a resolved pipeline (the default name filled). */
export type SerpJob = Extract<Job, { kind: 'serp' }>;
/** One search-volume job of a resolved pipeline. */
export type SearchVolumeJob = Extract<Job, { kind: 'search_volume' }>;
/** The job of one kind, e.g. `JobOf<'labs'>`. */
export type JobOf<K extends Job['kind']> = Extract<Job, { kind: K }>;

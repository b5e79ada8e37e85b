import { z } from 'zod';
import type { JobSpecs } from './expand.js';
import type { CrawlReads, EmbedSpec, JobKind, Named } from './job-kind.js';
import { adTrafficJob } from './kinds/ad-traffic.js';
import { aiVolumeJob } from './kinds/ai-volume.js';
import { backlinksJob } from './kinds/backlinks.js';
import { embeddingsJob } from './kinds/embeddings.js';
import { endpointJob } from './kinds/endpoint.js';
import { keywordsForKeywordsJob } from './kinds/keywords-for-keywords.js';
import { keywordsForSiteJob } from './kinds/keywords-for-site.js';
import { labsJob } from './kinds/labs.js';
import { llmResponsesJob } from './kinds/llm-responses.js';
import { ON_PAGE_DEFAULT_READS, onPageJob } from './kinds/on-page.js';
import { searchVolumeJob } from './kinds/search-volume.js';
import { serpJob } from './kinds/serp.js';
import { trendsJob } from './kinds/trends.js';

/**
 * Every job kind, in the order the config union (and so the JSON Schema, and the "accepted:"
 * list of an unknown kind) shows them. Adding a kind is one module and one entry here.
 */
export const JOB_KINDS = [
  serpJob,
  searchVolumeJob,
  keywordsForSiteJob,
  keywordsForKeywordsJob,
  adTrafficJob,
  trendsJob,
  labsJob,
  backlinksJob,
  onPageJob,
  aiVolumeJob,
  llmResponsesJob,
  embeddingsJob,
  endpointJob,
] as const;

type Kinds = typeof JOB_KINDS;
type SchemasOf<T extends readonly JobKind[]> = { [I in keyof T]: T[I]['schema'] };

/** Every job kind's schema, told apart by `kind`; a pipeline file can mix them. */
export const jobSchema = z.discriminatedUnion('kind', JOB_KINDS.map((k) => k.schema) as unknown as SchemasOf<Kinds>);

/** One job as the planner and the run see it: any kind, its name filled in. */
export type AnyJob = Named<z.output<typeof jobSchema>>;
/** The name of a job kind (`'serp'`, `'labs'`, ...). */
export type JobKindName = AnyJob['kind'];

const byKind = new Map<string, JobKind>(JOB_KINDS.map((k) => [k.kind, k as unknown as JobKind]));

/** The module of a kind; throws on a kind no module declares (a validated job always has one). */
export function jobKindOf(kind: string): JobKind {
  const k = byKind.get(kind);
  if (!k) throw new Error(`unknown job kind ${kind}`);
  return k;
}

/**
 * The planner's dispatch: the task bodies of one job, by its kind's `expand`. SERP:
 * engines × devices × locations × languages × keywords; keyword lists packed to the
 * endpoint's limit; labs, backlinks and keywords for site one task per keyword or target;
 * LLM responses one per prompt and model; embeddings none (they run after collection); a
 * generic job its template's expansion and its tasks.
 */
export function expandJob(job: AnyJob): JobSpecs {
  return jobKindOf(job.kind).expand(job as never);
}

/** The catalog ids of the `task_post` endpoints whose tasks are crawls (watched and read, not pulled). */
export const CRAWL_POST_ENDPOINTS: ReadonlySet<string> = new Set(JOB_KINDS.flatMap((k) => (k.crawl ? [k.crawl.postEndpoint] : [])));

/**
 * What to read of the crawls of the named job: its kind's `crawl.reads`, or, for a job
 * since removed from the file, the crawl kind's defaults (on-page is the one crawl kind).
 */
export function crawlReadsOf(jobs: readonly AnyJob[], name: string): CrawlReads {
  const job = jobs.find((j) => j.name === name);
  const crawl = job && jobKindOf(job.kind).crawl;
  if (job && crawl) return crawl.reads(job as never);
  return ON_PAGE_DEFAULT_READS;
}

/** The pipeline's jobs that embed keywords after collection (their kind's `embeds`), with what each asks for. */
export function embeddingJobs(jobs: readonly AnyJob[]): (EmbedSpec & { name: string })[] {
  return jobs.flatMap((job) => {
    const spec = jobKindOf(job.kind).embeds?.(job as never);
    return spec ? [{ name: job.name, ...spec }] : [];
  });
}

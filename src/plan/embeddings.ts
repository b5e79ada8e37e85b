import { EMBEDDING_MODELS } from '../catalog/index.js';
import type { Pipeline } from '../config/index.js';
import { embeddingJobs } from '../jobs/index.js';
import type { PlannedTask } from './plan.js';

/** The distinct keywords a plan's tasks ask about (`keyword`, or each of `keywords`): what an `embeddings` job embeds. */
export function plannedKeywords(tasks: readonly PlannedTask[]): string[] {
  const out = new Set<string>();
  for (const t of tasks) {
    const { keyword, keywords } = t.spec as { keyword?: unknown; keywords?: unknown };
    if (typeof keyword === 'string') out.add(keyword);
    if (Array.isArray(keywords)) for (const k of keywords) if (typeof k === 'string') out.add(k);
  }
  return [...out].sort();
}

/** What an `embeddings` job of the pipeline would buy. */
export interface EmbeddingsPlan {
  job: string;
  model: string;
  dimensions: number;
  /** Keywords of the run's tasks. */
  keywords: number;
  /** Of them, already in the warehouse's `keyword_embeddings` cache (not bought again). */
  cached: number;
  calls: number;
  /** Estimated at about four characters a token (the spec gives no tokenizer). */
  tokens: number;
  cnyPer1kTokens: number;
  cny: number;
}

/**
 * The embedding calls of the pipeline's `embeddings` jobs: every keyword its tasks ask
 * about that the cache does not hold, `batch_size` to a call, priced at the reference rate.
 */
export function planEmbeddings(
  pipeline: Pipeline,
  tasks: readonly PlannedTask[],
  cached: (model: string, dimensions: number) => ReadonlySet<string> = () => new Set(),
): EmbeddingsPlan[] {
  const keywords = plannedKeywords(tasks);
  return embeddingJobs(pipeline.jobs).flatMap((job) => {
    const dimensions = job.dimensions;
    const have = cached(job.model, dimensions);
    const toBuy = keywords.filter((k) => !have.has(k));
    const tokens = toBuy.reduce((n, k) => n + Math.max(1, Math.ceil(k.length / 4)), 0);
    const rate = EMBEDDING_MODELS[job.model]!.cnyPer1kTokens;
    return [
      {
        job: job.name,
        model: job.model,
        dimensions,
        keywords: keywords.length,
        cached: keywords.length - toBuy.length,
        calls: Math.ceil(toBuy.length / job.batchSize),
        tokens,
        cnyPer1kTokens: rate,
        cny: (tokens / 1000) * rate,
      },
    ];
  });
}

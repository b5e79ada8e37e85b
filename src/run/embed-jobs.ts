import type { Logger } from 'pino';
import type { ServiceClient } from '../client/index.js';
import type { Pipeline } from '../config/index.js';
import { embeddingJobs } from '../jobs/index.js';
import { embedWithCache } from '../models/index.js';
import { killPoint } from './kill-point.js';
import { serviceEmbed } from './service-fns.js';
import { plannedKeywords, type PlannedTask } from '../plan/index.js';
import type { Warehouse } from '../warehouse/index.js';

/**
 * Runs the pipeline's jobs that embed (an `embeddings` job, by its kind's `embeds`): every keyword the run's tasks asked about is
 * embedded with `/v1/embeddings` unless the cache (`keyword_embeddings`, keyed by model,
 * dimensions and text) has it, so a keyword is bought once. Each call is landed and in the
 * ledger like any other. Returns whether any job ran.
 */
export async function embedJobs(
  c: { o: { pipeline: Pipeline }; wh: Warehouse; client: ServiceClient; log: Logger; note: (t: string) => void },
  tasks: readonly PlannedTask[],
): Promise<boolean> {
  const jobs = embeddingJobs(c.o.pipeline.jobs);
  if (jobs.length === 0) return false;
  const keywords = plannedKeywords(tasks);
  for (const job of jobs) {
    const r = await embedWithCache(c.wh, keywords, {
      model: job.model,
      dimensions: job.dimensions,
      embed: async (texts) => {
        const vectors = await serviceEmbed(c.client, job.model, job.requestDimensions)(texts);
        // The kill matrix's point between a batch's landed answer and the insert that keeps its vectors.
        killPoint('embeddings', 'middle');
        return vectors;
      },
      batchSize: job.batchSize,
    });
    c.log.info({ job: job.name, cached: r.cached, embedded: r.embedded, calls: r.calls }, 'embeddings');
    c.note(`${job.name}: ${keywords.length} keyword(s), ${r.embedded} embedded now in ${r.calls} call(s), ${r.cached} from the cache`);
  }
  return true;
}

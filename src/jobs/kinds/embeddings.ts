import { z } from 'zod';
import { jobBase } from '../base-fields.js';
import { defineJobKind } from '../job-kind.js';

/**
 * `/v1/embeddings` vectors of the keywords the other jobs collected: no task of its own; its
 * `embeds` tells the run what to embed after collection (`run/embed-jobs.ts`) and cluster
 * (`run/models-step.ts`), and `pipeline plan` what to price (`plan/embeddings.ts`).
 */
export const embeddingsJob = defineJobKind({
  kind: 'embeddings',
  schema: z
    .strictObject({
      ...jobBase('embeddings', '`/v1/embeddings` vectors of the keywords the other jobs collected.'),
      model: z
        .enum(['text-embedding-3-small', 'text-embedding-3-large', 'text-embedding-ada-002'])
        .default('text-embedding-3-small')
        .describe('Embedding model.'),
      dimensions: z
        .number()
        .int()
        .min(8, 'at least 8')
        .max(3072, 'at most 3072')
        .default(256)
        .describe('Vector size (text-embedding-3-* only; ada-002 is 1536).'),
      batch_size: z.number().int().min(1).max(2048).default(100).describe('Keywords per embeddings call.'),
    })
    .superRefine((j, ctx) => {
      if (j.model === 'text-embedding-ada-002' && j.dimensions !== 1536)
        ctx.addIssue({ code: 'custom', path: ['dimensions'], message: 'text-embedding-ada-002 has 1536 dimensions only' });
    })
    .describe(
      'Embeddings of every keyword of this pipeline, after its other jobs are collected; cached by model, dimensions and text, so each keyword is bought once.',
    ),
  expand: () => ({ specs: [], repeatsDropped: 0 }),
  embeds: (job) => ({
    model: job.model,
    dimensions: embeddingDimensions(job),
    requestDimensions: job.dimensions,
    batchSize: job.batch_size,
  }),
});

/** The vector size an embeddings job gets: ada-002 has 1536 whatever the file says. */
export function embeddingDimensions(job: { model: string; dimensions: number }): number {
  return job.model === 'text-embedding-ada-002' ? 1536 : job.dimensions;
}

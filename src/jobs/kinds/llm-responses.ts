import { z } from 'zod';
import { endpoint } from '../../catalog/index.js';
import { jobBase, liveOnlyModeSchema, paramsSchema } from '../base-fields.js';
import { defineJobKind } from '../job-kind.js';

/**
 * Answers of language models to prompts: one request per distinct prompt and model. The
 * models are checked against the service's free models list before anything is bought
 * (`run/check-models.ts`).
 */
export const llmResponsesJob = defineJobKind({
  kind: 'llm_responses',
  schema: z
    .strictObject({
      ...jobBase('llm_responses', 'answers of language models to prompts (live only).'),
      mode: liveOnlyModeSchema,
      prompts: z
        .array(z.string().min(1, 'must not be empty').max(500, 'at most 500 characters'))
        .min(1, 'at least one prompt')
        .describe('Prompts (at most 500 characters each); each is asked of every model.'),
      models: z
        .array(z.string().min(1, 'must not be empty'))
        .min(1, 'at least one model')
        .describe('Model names (`model_name` of the service).'),
      max_output_tokens: z
        .number()
        .int()
        .min(16, 'at least 16')
        .max(4096, 'at most 4096')
        .optional()
        .describe('Output token cap, 16 to 4096.'),
      web_search: z.boolean().optional().describe('Let the model search the web.'),
      params: paramsSchema,
    })
    .describe('LLM responses: one request per prompt and model.'),
  expand(job) {
    const ep = endpoint('ai_optimization.chat_llm.llm_responses.live');
    const specs = job.models.flatMap((model_name) =>
      [...new Set(job.prompts)].map((user_prompt) => ({
        endpoint: ep,
        spec: {
          user_prompt,
          model_name,
          ...(job.max_output_tokens !== undefined ? { max_output_tokens: job.max_output_tokens } : {}),
          ...(job.web_search !== undefined ? { web_search: job.web_search } : {}),
          ...job.params,
        },
      })),
    );
    return { specs, repeatsDropped: 0 };
  },
});

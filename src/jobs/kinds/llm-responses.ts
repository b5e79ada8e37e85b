import { z } from 'zod';
import { endpoint } from '../../catalog/index.js';
import { jobBase, liveOnlyModeSchema, paramsSchema } from '../base-fields.js';
import { defineJobKind, type PreflightIssue } from '../job-kind.js';
import { offeredLlmModels } from '../reference.js';

/**
 * Answers of language models to prompts: one request per distinct prompt and model. The
 * models are checked against the service's free models list before anything is bought (its
 * preflight): the service would refuse each unknown one with 40501 after the others were paid for.
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
  async preflight(jobs, read) {
    const { names, bases, reasoning } = await offeredLlmModels(read);
    if (names.size === 0) {
      return { issues: [], warnings: ['the llm_responses/models list named no model; model names are left to the service to check'] };
    }
    const issues: PreflightIssue[] = [];
    for (const { at, job } of jobs) {
      for (const [i, model] of job.models.entries()) {
        if (names.has(model)) continue;
        issues.push({
          path: ['jobs', at, 'models', i],
          rule: `model '${model}' is not offered by the service (llm_responses/models lists ${bases.join(', ')}); nothing was posted`,
        });
      }
    }
    // Reasoning models (by the list's flag) take at least 1024 output tokens and no temperature.
    for (const { at, job } of jobs) {
      const reasoners = job.models.filter((m) => reasoning.has(m));
      if (reasoners.length === 0) continue;
      const which = `reasoning model${reasoners.length > 1 ? 's' : ''} ${reasoners.map((m) => `'${m}'`).join(', ')} (flagged so by llm_responses/models)`;
      if (job.max_output_tokens !== undefined && job.max_output_tokens < 1024) {
        issues.push({
          path: ['jobs', at, 'max_output_tokens'],
          rule: `${job.max_output_tokens} is below the 1024 the ${which} need; nothing was posted`,
        });
      }
      if ((job.params as Record<string, unknown> | undefined)?.temperature !== undefined) {
        issues.push({ path: ['jobs', at, 'params', 'temperature'], rule: `not supported by the ${which}; nothing was posted` });
      }
    }
    return { issues, warnings: [] };
  },
});

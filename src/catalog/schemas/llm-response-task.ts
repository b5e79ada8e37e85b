import { z } from 'zod';
import { forbidBoth, tagField } from './common.js';

/**
 * The LLM-responses request table: prompt length, token bounds, temperature xor top_p. The
 * rules of reasoning models (`max_output_tokens` at least 1024, no `temperature`) are not
 * checked here: whether a model reasons is known only from the models list's own
 * `reasoning` flag, never from its name, so the run checks them against that list before
 * anything is bought (the llm_responses job preflight, src/jobs/kinds/llm-responses.ts).
 */
export const llmResponseTaskSchema = z
  .object({
    user_prompt: z.string().min(1, 'must not be empty').max(500, 'at most 500 characters'),
    model_name: z.string().min(1, 'must not be empty'),
    max_output_tokens: z.number().int().min(16, 'at least 16').max(4096, 'at most 4096').optional(),
    temperature: z.number().min(0, 'between 0 and 2').max(2, 'between 0 and 2').optional(),
    top_p: z.number().min(0, 'between 0 and 1').max(1, 'between 0 and 1').optional(),
    web_search: z.boolean().optional(),
    tag: tagField,
  })
  .passthrough()
  .superRefine((t, ctx) => {
    forbidBoth(t, 'temperature', 'top_p', ctx);
  });

import { z } from 'zod';
import { forbidBoth, tagField } from './common.js';

/**
 * Whether a model name looks like a reasoning model. The spec's rules differ for them
 * (`max_output_tokens` at least 1024, no `temperature`) but the model list is only served
 * by the models endpoint, so names are recognised by common markers; a caller with the
 * list in hand can refuse more before sending.
 */
export function isReasoningModelName(name: string): boolean {
  return /(^|[-_/ ])(o\d+|r\d+)([-_ ]|$)|reason|thinking/i.test(name);
}

/** The LLM-responses request table: prompt length, token bounds, temperature xor top_p. */
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
    if (isReasoningModelName(t.model_name)) {
      if (t.max_output_tokens !== undefined && t.max_output_tokens < 1024) {
        ctx.addIssue({ code: 'custom', path: ['max_output_tokens'], message: 'at least 1024 for reasoning models' });
      }
      if (t.temperature !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['temperature'], message: 'not supported by reasoning models' });
      }
    }
  });

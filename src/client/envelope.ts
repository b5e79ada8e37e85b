import { z } from 'zod';

/**
 * The common /v3 envelope, checked loosely: the fields the success rule needs are typed,
 * everything else passes through untouched so the loader keeps it.
 */
export const taskSchema = z
  .object({
    id: z.string().nullish(),
    status_code: z.number().int(),
    status_message: z.string().nullish(),
    cost: z.number().nullish(),
    result_count: z.number().nullish(),
    path: z.array(z.string()).nullish(),
    data: z.unknown().optional(),
    result: z.array(z.unknown()).nullish(),
  })
  .passthrough();

export const envelopeSchema = z
  .object({
    version: z.string().nullish(),
    status_code: z.number().int(),
    status_message: z.string().nullish(),
    time: z.string().nullish(),
    cost: z.number().nullish(),
    tasks_count: z.number().nullish(),
    tasks_error: z.number().nullish(),
    tasks: z.array(taskSchema).nullish(),
  })
  .passthrough();

export type EnvelopeTask = z.infer<typeof taskSchema>;
export type Envelope = z.infer<typeof envelopeSchema>;

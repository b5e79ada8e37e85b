import { z } from 'zod';

/** Evaluated by the missed-nights check (src/alerts/missed-nights.ts), which reads the pipeline's schedule. */
export const missedNights = {
  name: 'missed_nights',
  option: z
    .number()
    .int('a whole number of nights')
    .min(1, 'at least 1')
    .describe('A scheduled pipeline has not completed for N scheduled nights (needs `schedule`).'),
  scope: 'schedule',
} as const;

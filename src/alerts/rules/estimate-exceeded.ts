import { z } from 'zod';
import { cny, runRule } from './rule.js';

/** An estimate of 0 or none is not exceeded by anything (there is nothing to compare with). */
export const estimateExceeded = runRule({
  name: 'estimate_exceeded',
  option: z.number().positive('a positive factor, e.g. 1.2').describe('This run charged more than N times its plan estimate.'),
  check: (f, n) =>
    f.estimateCny !== null && f.estimateCny > 0 && f.chargedNetCny > n * f.estimateCny
      ? {
          before: f.estimateCny.toFixed(4),
          after: f.chargedNetCny.toFixed(4),
          threshold: String(n),
          message: `Run ${f.runId} of *${f.pipeline}* charged ${cny(f.chargedNetCny)}, ${(f.chargedNetCny / f.estimateCny).toFixed(2)}x its estimate of ${cny(f.estimateCny)} (alert above ${n}x)`,
        }
      : null,
});

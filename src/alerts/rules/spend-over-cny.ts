import { z } from 'zod';
import { cny, runRule } from './rule.js';

export const spendOverCny = runRule({
  name: 'spend_over_cny',
  option: z.number().positive('a positive number of CNY').describe('This run charged more than N CNY, net of refunds.'),
  check: (f, n) =>
    f.chargedNetCny > n
      ? {
          before: null,
          after: f.chargedNetCny.toFixed(4),
          threshold: String(n),
          message: `Run ${f.runId} of *${f.pipeline}* charged ${cny(f.chargedNetCny)} (net of refunds), over the ${n} CNY alert line`,
        }
      : null,
});

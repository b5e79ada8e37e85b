import { on, runRule } from './rule.js';

export const runNotCompleted = runRule({
  name: 'run_not_completed',
  option: on('The run ended partial or failed, or stopped at the budget.'),
  check: (f) =>
    f.state !== 'completed'
      ? {
          before: null,
          after: f.state,
          threshold: 'true',
          message: `Run ${f.runId} of *${f.pipeline}* ended ${f.state}${f.stopReason ? `: ${f.stopReason}` : ''}`,
        }
      : null,
});

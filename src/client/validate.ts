import type { Endpoint } from '../catalog/index.js';
import { EtlError } from '../errors.js';

/**
 * Checks a POST body against the catalog before it is sent: too many tasks, or any task
 * breaking its schema, is refused with the task index, field and rule, and costs nothing.
 */
export function validateTasks(ep: Endpoint, tasks: unknown[]): void {
  const problems: string[] = [];
  if (tasks.length === 0) problems.push('the body holds no task');
  if (ep.maxTasksPerPost !== undefined && tasks.length > ep.maxTasksPerPost) {
    problems.push(`${tasks.length} tasks in one POST; ${ep.path} takes at most ${ep.maxTasksPerPost}`);
  }
  if (ep.request) {
    tasks.forEach((task, index) => {
      const r = ep.request!.safeParse(task);
      if (r.success) return;
      for (const issue of r.error.issues) {
        const field = issue.path.length ? issue.path.join('.') : '(task)';
        problems.push(`task ${index}: ${field}: ${issue.message}`);
      }
    });
  }
  if (problems.length) {
    throw new EtlError('ETL_REQUEST_INVALID', `request to ${ep.path} refused before sending (nothing was charged):\n  ${problems.join('\n  ')}`, {
      context: { stage: 'client', path: ep.path },
    });
  }
}

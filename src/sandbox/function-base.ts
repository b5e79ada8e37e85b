/**
 * The path of the function an endpoint belongs to: its path without the lifecycle
 * suffix (`/task_post`, `/tasks_ready`, `/task_get/{format}/{id}`, `/live/{format}`), so
 * a task posted at one endpoint is found by the ready list and `task_get` of the same
 * function. `/v3/serp/engA/organic/task_get/advanced/{id}` → `/v3/serp/engA/organic`.
 */
export function functionBase(path: string): string {
  return path
    .replace(/\/(task_post|tasks_ready|tasks_fixed)$/, '')
    .replace(/\/task_get(\/(regular|advanced|html))?\/\{id\}$/, '')
    .replace(/\/live(\/(regular|advanced|html|json))?$/, '');
}

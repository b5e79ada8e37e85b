import type { z } from 'zod';
import { unlistedSerpFields, type Endpoint } from '../catalog/index.js';
import { EtlError } from '../errors.js';

const CALLBACK_FIELDS = ['pingback_url', 'postback_url', 'postback_data'] as const;

function issuesOf(schema: z.ZodType, value: unknown, prefix: string): string[] {
  const r = schema.safeParse(value);
  if (r.success) return [];
  return r.error.issues.map((issue) => {
    const field = issue.path.length ? issue.path.map(String).join('.') : '(task)';
    const keys = issue.code === 'unrecognized_keys' && 'keys' in issue ? ` ${(issue.keys as string[]).join(', ')}` : '';
    return `${prefix}${field}: ${issue.message}${keys}`;
  });
}

function refuse(ep: Endpoint, problems: string[]): never {
  throw new EtlError(
    'ETL_REQUEST_INVALID',
    `request to ${ep.path} refused before sending (nothing was charged):\n  ${problems.join('\n  ')}`,
    {
      context: { stage: 'client', path: ep.path, endpointId: ep.id, problems },
    },
  );
}

/**
 * Checks a `/v3` POST body against the catalog before it is sent: too many tasks, a task
 * breaking its schema or a clock-dependent rule (look-back windows), or a callback URL on an
 * endpoint without callbacks, is refused with the task index, field and rule, and costs nothing.
 */
export function validateTasks(ep: Endpoint, tasks: unknown[], opts: { now?: Date; onUnlisted?: (field: string) => void } = {}): void {
  const problems: string[] = [];
  if (!Array.isArray(tasks)) refuse(ep, ['the body must be a JSON array of tasks']);
  if (tasks.length === 0) problems.push('the body holds no task');
  if (ep.maxTasksPerPost !== undefined && tasks.length > ep.maxTasksPerPost) {
    problems.push(`${tasks.length} tasks in one POST; ${ep.path} takes at most ${ep.maxTasksPerPost}`);
  }
  tasks.forEach((task, index) => {
    const prefix = `task ${index}: `;
    if (task === null || typeof task !== 'object' || Array.isArray(task)) {
      problems.push(`${prefix}(task): must be a JSON object`);
      return;
    }
    if (ep.request) problems.push(...issuesOf(ep.request, task, prefix));
    const t = task as Record<string, unknown>;
    // SERP organic fields the spec does not list go through as written, with a warning.
    if (opts.onUnlisted && ep.api === 'serp' && ep.id.includes('.organic.')) for (const f of unlistedSerpFields(t)) opts.onUnlisted(f);
    if (!ep.callbacks) {
      for (const f of CALLBACK_FIELDS) if (t[f] !== undefined) problems.push(`${prefix}${f}: ${ep.path} has no callback support`);
    }
    if (ep.timeRules) {
      for (const i of ep.timeRules(t, opts.now ?? new Date())) problems.push(`${prefix}${i.path.join('.')}: ${i.message}`);
    }
  });
  if (problems.length) refuse(ep, problems);
}

/** Checks a `/v1` body (one JSON object) against the catalog before it is sent. */
export function validateBody(ep: Endpoint, body: unknown): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) refuse(ep, ['(body): must be a JSON object']);
  const problems = ep.request ? issuesOf(ep.request, body, '') : [];
  if (problems.length) refuse(ep, problems);
}

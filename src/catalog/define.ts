import type { Endpoint, EndpointMode, ResultFormat, ResultKind } from './endpoint.js';
import { familyOf } from './family-of.js';
import type { FamilyId } from './families.js';

/** The parts of an entry that cannot be derived from its path and mode. */
export interface EndpointDef {
  path: string;
  mode: EndpointMode;
  method?: 'GET' | 'POST';
  id?: string;
  format?: ResultFormat;
  family?: FamilyId;
  maxTasksPerPost?: number;
  maxKeywordsPerTask?: number;
  callbacks?: boolean;
  charged?: boolean;
  request?: Endpoint['request'];
  timeRules?: Endpoint['timeRules'];
  ai?: boolean;
  resultKind?: ResultKind;
  inferred?: string;
}

/**
 * The id of a path: the part after the version, `/` to `.`, `{id}` dropped and other
 * placeholders kept by name (`/v3/serp/engA/organic/task_get/advanced/{id}` →
 * `serp.engA.organic.task_get.advanced`; `/v1/embeddings` → `v1.embeddings`).
 */
export function idFromPath(path: string): string {
  const segs = path.split('/').filter(Boolean);
  const rest = segs[0] === 'v3' ? segs.slice(1) : segs;
  return rest
    .filter((s) => s !== '{id}')
    .map((s) => s.replace(/^\{(.+)\}$/, '$1'))
    .join('.');
}

/**
 * Builds an entry with the defaults the spec implies: POST for live and task creation, GET
 * for the ready list and results; live and task creation charged, the rest free; up to 100
 * tasks per `task_post` with callbacks, one task per live call; `.ai` for live, task
 * creation and task-get endpoints of `/v3`.
 */
export function define(d: EndpointDef): Endpoint {
  const v1 = d.path.startsWith('/v1/');
  const method = d.method ?? (d.mode === 'live' || d.mode === 'task_post' ? 'POST' : 'GET');
  const ep: Endpoint = {
    id: d.id ?? idFromPath(d.path),
    method,
    path: d.path,
    api: v1 ? 'v1' : (d.path.split('/')[2] ?? ''),
    family: d.family ?? familyOf(d.path),
    mode: d.mode,
    body: method === 'GET' ? 'none' : v1 ? 'object' : 'tasks',
    callbacks: d.callbacks ?? d.mode === 'task_post',
    charged: d.charged ?? (d.mode === 'live' || d.mode === 'task_post'),
    ai: d.ai ?? (!v1 && (d.mode === 'live' || d.mode === 'task_post' || d.mode === 'task_get')),
  };
  const maxTasks = d.maxTasksPerPost ?? (method === 'POST' && !v1 ? (d.mode === 'task_post' ? 100 : 1) : undefined);
  if (maxTasks !== undefined) ep.maxTasksPerPost = maxTasks;
  if (d.maxKeywordsPerTask !== undefined) ep.maxKeywordsPerTask = d.maxKeywordsPerTask;
  if (d.format) ep.format = d.format;
  if (d.request) ep.request = d.request;
  if (d.timeRules) ep.timeRules = d.timeRules;
  if (d.resultKind) ep.resultKind = d.resultKind;
  if (d.inferred) ep.inferred = d.inferred;
  return ep;
}

/**
 * The standard four of a task-based function: `task_post`, `tasks_ready`, and `task_get`
 * in each format (no format segment when `formats` is empty), plus `live` entries when given.
 */
export function taskFunction(
  base: string,
  o: {
    formats: readonly ResultFormat[];
    live?: readonly ResultFormat[] | 'plain';
    request?: Endpoint['request'];
    liveRequest?: Endpoint['request'];
    resultKind: ResultKind;
    inferred?: string;
    maxKeywordsPerTask?: number;
  },
): Endpoint[] {
  const extra = {
    ...(o.inferred ? { inferred: o.inferred } : {}),
    ...(o.maxKeywordsPerTask ? { maxKeywordsPerTask: o.maxKeywordsPerTask } : {}),
  };
  const out: Endpoint[] = [
    define({ path: `${base}/task_post`, mode: 'task_post', request: o.request, resultKind: o.resultKind, ...extra }),
    define({
      path: `${base}/tasks_ready`,
      mode: 'tasks_ready',
      resultKind: 'tasks_ready',
      ...(o.inferred ? { inferred: o.inferred } : {}),
    }),
  ];
  if (o.formats.length === 0) {
    out.push(
      define({
        path: `${base}/task_get/{id}`,
        mode: 'task_get',
        resultKind: o.resultKind,
        ...(o.inferred ? { inferred: o.inferred } : {}),
      }),
    );
  }
  for (const format of o.formats) {
    out.push(
      define({
        path: `${base}/task_get/${format}/{id}`,
        mode: 'task_get',
        format,
        resultKind: o.resultKind,
        ...(o.inferred ? { inferred: o.inferred } : {}),
      }),
    );
  }
  const liveRequest = o.liveRequest ?? o.request;
  if (o.live === 'plain') {
    out.push(define({ path: `${base}/live`, mode: 'live', request: liveRequest, resultKind: o.resultKind, ...extra }));
  } else {
    for (const format of o.live ?? []) {
      out.push(define({ path: `${base}/live/${format}`, mode: 'live', format, request: liveRequest, resultKind: o.resultKind, ...extra }));
    }
  }
  return out;
}

import type { z } from 'zod';
import type { FamilyId } from './families.js';
import { serpTaskSchema } from './serp-task.js';

/** What a call of this endpoint does in the task lifecycle. */
export type EndpointMode = 'live' | 'task_post' | 'tasks_ready' | 'task_get' | 'utility';
export type ResultFormat = 'regular' | 'advanced' | 'html';

/**
 * One endpoint of the service, as data. The client, the planner, the emulator and the
 * loader all read this; adding an endpoint is adding an entry.
 */
export interface Endpoint {
  /** Stable id, e.g. `serp.engA.organic.task_post`. */
  id: string;
  method: 'GET' | 'POST';
  /** Path template; `{id}` stands for a task id. */
  path: string;
  family: FamilyId;
  mode: EndpointMode;
  format?: ResultFormat;
  /** Most tasks one POST may carry (extra tasks fail with 40006). */
  maxTasksPerPost?: number;
  /** Whether tasks created here can carry pingback/postback URLs. */
  callbacks: boolean;
  /** Whether the service charges for calls of this endpoint. */
  charged: boolean;
  /** Schema of one task of the POST body. */
  request?: z.ZodType;
  /** Which normalizer of the warehouse reads the result. */
  resultKind?: 'serp';
}

/** Engine/type pairs of the spec whose organic SERP the foundation serves. */
export const SERP_ORGANIC_ENGINES = ['engA', 'engB', 'engC', 'engD', 'engE', 'engF', 'engG'] as const;
export type SerpEngine = (typeof SERP_ORGANIC_ENGINES)[number];

function serpFunction(engine: string, type: string): Endpoint[] {
  const base = `/v3/serp/${engine}/${type}`;
  const id = `serp.${engine}.${type}`;
  const family: FamilyId = 'serp_keywords_domain';
  const formats: ResultFormat[] = ['regular', 'advanced', 'html'];
  return [
    {
      id: `${id}.task_post`,
      method: 'POST',
      path: `${base}/task_post`,
      family,
      mode: 'task_post',
      maxTasksPerPost: 100,
      callbacks: true,
      charged: true,
      request: serpTaskSchema,
      resultKind: 'serp',
    },
    { id: `${id}.tasks_ready`, method: 'GET', path: `${base}/tasks_ready`, family, mode: 'tasks_ready', callbacks: false, charged: false },
    ...formats.map(
      (format): Endpoint => ({
        id: `${id}.task_get.${format}`,
        method: 'GET',
        path: `${base}/task_get/${format}/{id}`,
        family,
        mode: 'task_get',
        format,
        callbacks: false,
        charged: false,
        resultKind: 'serp',
      }),
    ),
    ...(['regular', 'advanced'] as const).map(
      (format): Endpoint => ({
        id: `${id}.live.${format}`,
        method: 'POST',
        path: `${base}/live/${format}`,
        family,
        mode: 'live',
        format,
        maxTasksPerPost: 1,
        callbacks: false,
        charged: true,
        request: serpTaskSchema,
        resultKind: 'serp',
      }),
    ),
  ];
}

/** Every endpoint the tool knows, in one list. */
export const ENDPOINTS: readonly Endpoint[] = SERP_ORGANIC_ENGINES.flatMap((e) => serpFunction(e, 'organic'));

import { define, taskFunction } from './define.js';
import type { Endpoint } from './endpoint.js';
import { eventsTaskSchema } from './schemas/events-task.js';
import { looseTaskSchema } from './schemas/common.js';
import { SERP_PAIRS } from './serp-pairs.js';
import { serpTaskLooseSchema, serpTaskSchema } from './serp-task.js';

/** SERP types whose task is not keyword-based (an image, a dataset or a video id); fields not shown. */
const NON_KEYWORD_TYPES = new Set(['search_by_image', 'dataset_info', 'video_info', 'video_subtitles', 'video_comments']);

function requestFor(type: string) {
  if (type === 'organic') return serpTaskSchema;
  if (type === 'events') return eventsTaskSchema;
  return NON_KEYWORD_TYPES.has(type) ? looseTaskSchema : serpTaskLooseSchema;
}

/**
 * One SERP function: task creation, ready list, the three `task_get` formats, live regular
 * and advanced, and the function's `tasks_fixed` list.
 */
function serpFunction(engine: string, type: string): Endpoint[] {
  const base = `/v3/serp/${engine}/${type}`;
  return [
    ...taskFunction(base, {
      formats: ['regular', 'advanced', 'html'],
      live: ['regular', 'advanced'],
      request: requestFor(type),
      resultKind: 'serp',
      ...(type === 'organic' ? {} : { inferred: 'formats regular/advanced/html and live regular/advanced assumed as for organic' }),
    }),
    define({ path: `${base}/tasks_fixed`, mode: 'utility', method: 'GET', resultKind: 'tasks_fixed' }),
  ];
}

/** SERP endpoints: the 21 pairs, the events `v2` paths, locations, languages, endpoint list. */
export const SERP_ENDPOINTS: readonly Endpoint[] = [
  ...SERP_PAIRS.flatMap(([engine, type]) => serpFunction(engine, type)),
  // The Engine A events table also names these v2-style paths; their parameters are not shown.
  ...(['live/advanced', 'task_post', 'task_get/advanced/{id}'] as const).map((rest) =>
    define({
      path: `/v3/serp/engA/v2/${rest}`,
      mode: rest === 'task_post' ? 'task_post' : rest === 'live/advanced' ? 'live' : 'task_get',
      ...(rest === 'task_post' ? {} : { format: 'advanced' as const }),
      ...(rest === 'task_get/advanced/{id}' ? {} : { request: serpTaskLooseSchema }),
      resultKind: 'serp',
      inferred: 'parameters not shown; SERP task rules applied, other fields pass through',
    }),
  ),
  define({ path: '/v3/serp/engA/locations', mode: 'utility', method: 'GET', ai: true, resultKind: 'locations' }),
  define({ path: '/v3/serp/engA/locations/{country_code}', mode: 'utility', method: 'GET', ai: true, resultKind: 'locations' }),
  define({ path: '/v3/serp/engA/languages', mode: 'utility', method: 'GET', resultKind: 'languages' }),
  define({ path: '/v3/serp/engA/events/locations', mode: 'utility', method: 'GET', ai: true, resultKind: 'locations' }),
  define({ path: '/v3/serp/endpoints', mode: 'utility', method: 'GET', resultKind: 'endpoint_list' }),
];

import type { Endpoint } from '../catalog/index.js';
import type { Pipeline } from '../config/index.js';
import { autoDepthOf, expandJob } from '../jobs/index.js';
import { chooseDepth, seriesKeyOf, type AutoChoice, type DepthHistory, type DepthReason } from './auto-depth.js';
import type { TasksPerPost } from './readings-use.js';
import { taskTag } from './tag.js';

/** One task to post, with the tag that finds it again. */
export interface PlannedTask {
  tag: string;
  job: string;
  endpoint: Endpoint;
  /** The task body as it will be posted (tag included). */
  spec: TaskSpec;
  /** Why its depth (`depth: auto` jobs only): kept on the task row (tasks.depth_reason). */
  depthReason?: DepthReason;
  /** The choice of an `auto` task: its series and the tracked domains its escalation looks for. */
  auto?: AutoChoice;
}

/** One task of a POST body: the endpoint's fields and the tag that finds it again. */
export type TaskSpec = { tag: string } & Record<string, unknown>;

export interface PlannedBatch {
  no: number;
  endpoint: Endpoint;
  tasks: PlannedTask[];
}

export interface Plan {
  pipeline: string;
  runId: string;
  tasks: PlannedTask[];
  batches: PlannedBatch[];
  /** Keyword × location × ... combinations dropped as repeats after lower-casing. */
  duplicatesDropped: number;
}

export { normalizeKeyword } from '../jobs/index.js';

/**
 * Expands a pipeline into tasks (SERP: engines × devices × locations × languages ×
 * keywords; search volume: locations × languages × keywords packed 700 a task), drops
 * repeats after lower-casing, tags each task, and packs them into the largest batches the
 * endpoint allows. A `depth: auto` job's tasks get the depth `history` (the warehouse's
 * depthHistory) gives their series (auto-depth.ts); without it, every series is swept.
 */
export function planPipeline(pipeline: Pipeline, runId: string, perPost?: TasksPerPost, history?: DepthHistory): Plan {
  const tasks: PlannedTask[] = [];
  const seen = new Set<string>();
  let duplicatesDropped = 0;
  for (const job of pipeline.jobs) {
    const { specs, repeatsDropped } = expandJob(job);
    duplicatesDropped += repeatsDropped;
    for (const { endpoint: ep, spec } of specs) {
      const tag = taskTag(pipeline.name, runId, { endpoint: ep.id, ...spec });
      if (seen.has(tag)) {
        duplicatesDropped++;
        continue;
      }
      seen.add(tag);
      if (job.kind === 'serp' && spec.depth === 'auto') {
        // The tag keeps `auto`: a resumed run finds its tasks whatever depth tonight's history gives.
        const auto = chooseDepth(autoDepthOf(job), job.track_domains ?? [], seriesKeyOf(ep.id, spec), history);
        tasks.push({
          tag,
          job: job.name,
          endpoint: ep,
          spec: withFields(spec, { depth: auto.depth, tag }),
          depthReason: auto.reason,
          auto,
        });
        continue;
      }
      tasks.push({ tag, job: job.name, endpoint: ep, spec: withFields(spec, { tag }) });
    }
  }
  return { pipeline: pipeline.name, runId, tasks, batches: packBatches(tasks, perPost), duplicatesDropped };
}

/**
 * Groups tasks by endpoint and cuts each group at the endpoint's most tasks per POST, or fewer
 * where `perPost` (the service's recorded reading, readings-use.ts) says the service takes fewer.
 */
export function packBatches(tasks: readonly PlannedTask[], perPost?: TasksPerPost): PlannedBatch[] {
  const byEndpoint = new Map<string, PlannedTask[]>();
  for (const t of tasks) {
    const list = byEndpoint.get(t.endpoint.id) ?? [];
    list.push(t);
    byEndpoint.set(t.endpoint.id, list);
  }
  const batches: PlannedBatch[] = [];
  for (const list of byEndpoint.values()) {
    const ep = list[0]!.endpoint;
    const catalog = ep.maxTasksPerPost ?? 1;
    const size = Math.max(1, Math.min(catalog, perPost?.(ep) ?? catalog));
    for (let i = 0; i < list.length; i += size) {
      batches.push({ no: batches.length + 1, endpoint: ep, tasks: list.slice(i, i + size) });
    }
  }
  return batches;
}

/**
 * `{ ...spec, ...extra }`, made by assignment: V8 gives every object made by a spread a shape
 * (map) of its own, about 300 bytes more for each of a night's planned tasks, kept until the
 * night ends. A spec with an own `__proto__` key (from a YAML key of that name) is spread, which
 * copies it as a key, not as the prototype.
 */
function withFields<T extends object, U extends object>(spec: T, extra: U): T & U {
  if (Object.hasOwn(spec, '__proto__')) return { ...spec, ...extra };
  return Object.assign({}, spec, extra);
}

import { endpoint, type Endpoint } from '../catalog/index.js';
import type { Job, Pipeline, SearchVolumeJob, SerpJob } from '../config/index.js';
import { taskTag } from './tag.js';

/** One task to post, with the tag that finds it again. */
export interface PlannedTask {
  tag: string;
  job: string;
  endpoint: Endpoint;
  /** The task body as it will be posted (tag included). */
  spec: TaskSpec;
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

const LANGUAGE_CODE = /^[a-z]{2,3}(-[a-z]{2,4})?$/i;

/** Lower-cases and collapses whitespace, as the service does, so duplicates are found before paying. */
export function normalizeKeyword(k: string): string {
  return k.trim().replace(/\s+/g, ' ').toLowerCase();
}

type Spec = { endpoint: Endpoint; spec: Record<string, unknown> };

function placeFields(location: number | string, language: string): Record<string, unknown> {
  return {
    ...(typeof location === 'number' ? { location_code: location } : { location_name: location }),
    ...(LANGUAGE_CODE.test(language) ? { language_code: language.toLowerCase() } : { language_name: language }),
  };
}

function serpSpecs(job: SerpJob): Spec[] {
  const out: Spec[] = [];
  for (const engine of job.engines) {
    const ep = endpoint(`serp.${engine}.${job.type}.task_post`);
    for (const device of job.devices) {
      for (const location of job.locations) {
        for (const language of job.languages) {
          for (const keyword of job.keywords) {
            out.push({
              endpoint: ep,
              spec: { keyword: normalizeKeyword(keyword), ...placeFields(location, language), device, ...(job.os ? { os: job.os } : {}), depth: job.depth, priority: job.priority },
            });
          }
        }
      }
    }
  }
  return out;
}

/** Keywords de-duplicated once per job, then packed as many to a task as the endpoint takes at one price. */
function searchVolumeSpecs(job: SearchVolumeJob): Spec[] {
  const ep = endpoint('keywords_data.engA_ads.search_volume.task_post');
  const per = ep.maxKeywordsPerTask ?? 700;
  const keywords = [...new Set(job.keywords.map(normalizeKeyword))].sort();
  const out: Spec[] = [];
  for (const location of job.locations) {
    for (const language of job.languages) {
      for (let i = 0; i < keywords.length; i += per) {
        out.push({ endpoint: ep, spec: { keywords: keywords.slice(i, i + per), ...placeFields(location, language) } });
      }
    }
  }
  return out;
}

function specsOf(job: Job): Spec[] {
  return job.kind === 'serp' ? serpSpecs(job) : searchVolumeSpecs(job);
}

/**
 * Expands a pipeline into tasks (SERP: engines × devices × locations × languages ×
 * keywords; search volume: locations × languages × keywords packed 700 a task), drops
 * repeats after lower-casing, tags each task, and packs them into the largest batches the
 * endpoint allows.
 */
export function planPipeline(pipeline: Pipeline, runId: string): Plan {
  const tasks: PlannedTask[] = [];
  const seen = new Set<string>();
  let duplicatesDropped = 0;
  for (const job of pipeline.jobs) {
    if (job.kind === 'search_volume') {
      const distinct = new Set(job.keywords.map(normalizeKeyword)).size;
      duplicatesDropped += (job.keywords.length - distinct) * job.locations.length * job.languages.length;
    }
    for (const { endpoint: ep, spec } of specsOf(job)) {
      const tag = taskTag(pipeline.name, runId, { endpoint: ep.id, ...spec });
      if (seen.has(tag)) {
        duplicatesDropped++;
        continue;
      }
      seen.add(tag);
      tasks.push({ tag, job: job.name, endpoint: ep, spec: { ...spec, tag } });
    }
  }
  return { pipeline: pipeline.name, runId, tasks, batches: packBatches(tasks), duplicatesDropped };
}

/** Groups tasks by endpoint and cuts each group at the endpoint's most tasks per POST. */
export function packBatches(tasks: readonly PlannedTask[]): PlannedBatch[] {
  const byEndpoint = new Map<string, PlannedTask[]>();
  for (const t of tasks) {
    const list = byEndpoint.get(t.endpoint.id) ?? [];
    list.push(t);
    byEndpoint.set(t.endpoint.id, list);
  }
  const batches: PlannedBatch[] = [];
  for (const list of byEndpoint.values()) {
    const ep = list[0]!.endpoint;
    const size = ep.maxTasksPerPost ?? 1;
    for (let i = 0; i < list.length; i += size) {
      batches.push({ no: batches.length + 1, endpoint: ep, tasks: list.slice(i, i + size) });
    }
  }
  return batches;
}

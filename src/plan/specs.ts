import { encodeServiceKeyword, endpoint, ENDPOINTS, type Endpoint } from '../catalog/index.js';
import { fillTemplate, LABS_FUNCTIONS, type Job, type JobOf } from '../config/index.js';

/** One task body to post to one endpoint, before its tag is added. */
export type Spec = { endpoint: Endpoint; spec: Record<string, unknown> };

/** A job's task bodies, and how many keyword repeats packing dropped (per location and language). */
export interface JobSpecs {
  specs: Spec[];
  repeatsDropped: number;
}

const LANGUAGE_CODE = /^[a-z]{2,3}(-[a-z]{2,4})?$/i;

/** Lower-cases and collapses whitespace, as the service does, so duplicates are found before paying. */
export function normalizeKeyword(k: string): string {
  return k.trim().replace(/\s+/g, ' ').toLowerCase();
}

export function placeFields(location: number | string | undefined, language: string | undefined): Record<string, unknown> {
  return {
    ...(location === undefined ? {} : typeof location === 'number' ? { location_code: location } : { location_name: location }),
    ...(language === undefined ? {} : LANGUAGE_CODE.test(language) ? { language_code: language.toLowerCase() } : { language_name: language }),
  };
}

/** Each location × language pair; an empty list stands for "not given" (one pass without the field). */
function places(locations: readonly (number | string)[], languages: readonly string[]): Record<string, unknown>[] {
  const locs = locations.length ? locations : [undefined];
  const langs = languages.length ? languages : [undefined];
  return locs.flatMap((l) => langs.map((g) => placeFields(l, g)));
}

/** Distinct normalized keywords in first-seen order, and how many repeats were dropped. */
function distinct(keywords: readonly string[]): { list: string[]; repeats: number } {
  const list = [...new Set(keywords.map(normalizeKeyword))];
  return { list, repeats: keywords.length - list.length };
}

function chunks<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

/** The endpoint that answers a function in the job's mode: `task_post`, or the live form (advanced first). */
export function functionEndpoint(base: string, mode: 'standard' | 'live'): Endpoint {
  if (mode === 'standard') return endpoint(`${base}.task_post`);
  for (const suffix of ['live.advanced', 'live', 'live.regular', 'live.html']) {
    const e = ENDPOINTS.find((x) => x.id === `${base}.${suffix}`);
    if (e) return e;
  }
  throw new Error(`${base} has no live endpoint in the catalog`);
}

const priorityOf = (mode: 'standard' | 'live', priority: 1 | 2): Record<string, unknown> => (mode === 'standard' && priority === 2 ? { priority: 2 } : {});

function serp(job: JobOf<'serp'>): JobSpecs {
  const specs: Spec[] = [];
  for (const engine of job.engines) {
    const ep = functionEndpoint(`serp.${engine}.${job.type}`, job.mode);
    for (const device of job.devices) {
      for (const place of places(job.locations, job.languages)) {
        for (const keyword of job.keywords) {
          specs.push({
            endpoint: ep,
            spec: {
              // Sent so that the service, which decodes `%##` and `+`, searches what the user wrote.
              keyword: encodeServiceKeyword(normalizeKeyword(keyword)),
              ...place,
              ...(job.type === 'events' ? {} : { device }),
              ...(job.os ? { os: job.os } : {}),
              depth: job.depth,
              ...(ep.mode === 'task_post' ? { priority: job.priority } : {}),
              ...(job.target ? { target: job.target } : {}),
              ...job.params,
            },
          });
        }
      }
    }
  }
  return { specs, repeatsDropped: 0 };
}

/** Keywords packed as many to a task as the endpoint takes at one price (sorted, so a re-run packs alike). */
function packed(ep: Endpoint, keywords: readonly string[], per: number, pl: Record<string, unknown>[], extra: Record<string, unknown>, sort = true): JobSpecs {
  const { list, repeats } = distinct(keywords);
  if (sort) list.sort();
  const specs = pl.flatMap((place) => chunks(list, per).map((ks) => ({ endpoint: ep, spec: { keywords: ks, ...place, ...extra } })));
  return { specs, repeatsDropped: repeats * pl.length };
}

function perKey<T>(ep: Endpoint, values: readonly T[], pl: Record<string, unknown>[], body: (v: T) => Record<string, unknown>, extra: Record<string, unknown>): Spec[] {
  return pl.flatMap((place) => values.map((v) => ({ endpoint: ep, spec: { ...body(v), ...place, ...extra } })));
}

function searchVolume(job: JobOf<'search_volume'>): JobSpecs {
  const base = job.source === 'ads' ? 'keywords_data.engA_ads.search_volume' : 'keywords_data.engA.search_volume';
  const ep = functionEndpoint(base, job.mode);
  return packed(ep, job.keywords, endpoint(`${base}.task_post`).maxKeywordsPerTask ?? 700, places(job.locations, job.languages), {});
}

function endpointJob(job: JobOf<'endpoint'>): JobSpecs {
  const ep = endpoint(job.endpoint);
  const text = JSON.stringify(job.params);
  const pl = places(job.locations, job.languages);
  const extra = job.priority !== undefined && ep.mode === 'task_post' ? { priority: job.priority } : {};
  const specs: Spec[] = [];
  let repeatsDropped = 0;
  if (Object.keys(job.params).length > 0 || job.locations.length + job.languages.length > 0) {
    const { list, repeats } = distinct(job.keywords);
    const perTask = job.keywords_per_task ?? ep.maxKeywordsPerTask ?? 100;
    const keywordSets: Array<{ keyword?: string; keywords?: string[] }> = text.includes('"{keywords}"')
      ? chunks(list, perTask).map((ks) => ({ keywords: ks }))
      : text.includes('{keyword}')
        ? list.map((k) => ({ keyword: ep.api === 'serp' ? encodeServiceKeyword(k) : k }))
        : [{}];
    if (keywordSets.length > 0 && (text.includes('{keyword}') || text.includes('"{keywords}"'))) repeatsDropped = repeats * pl.length;
    const targets: Array<string | undefined> = text.includes('{target}') ? job.targets : [undefined];
    for (const place of pl) {
      for (const ks of keywordSets) {
        for (const target of targets) {
          specs.push({ endpoint: ep, spec: { ...place, ...(fillTemplate(job.params, { ...ks, ...(target ? { target } : {}) }) as Record<string, unknown>), ...extra } });
        }
      }
    }
  }
  for (const t of job.tasks) specs.push({ endpoint: ep, spec: { ...t } });
  return { specs, repeatsDropped };
}

/**
 * The task bodies of one job. SERP: engines × devices × locations × languages × keywords;
 * keyword lists packed to the endpoint's limit; labs, backlinks and keywords for site one
 * task per keyword or target; LLM responses one per prompt and model; embeddings none
 * (they run after collection); a generic job its template's expansion and its tasks.
 */
export function jobSpecs(job: Job): JobSpecs {
  switch (job.kind) {
    case 'serp':
      return serp(job);
    case 'search_volume':
      return searchVolume(job);
    case 'keywords_for_site': {
      const ep = functionEndpoint('keywords_data.engA_ads.keywords_for_site', job.mode);
      return { specs: perKey(ep, job.targets, places(job.locations, job.languages), (target) => ({ target, ...job.params }), priorityOf(job.mode, job.priority)), repeatsDropped: 0 };
    }
    case 'keywords_for_keywords': {
      const ep = functionEndpoint('keywords_data.engA_ads.keywords_for_keywords', job.mode);
      return packed(ep, job.keywords, job.keywords_per_task, places(job.locations, job.languages), { ...job.params, ...priorityOf(job.mode, job.priority) });
    }
    case 'ad_traffic': {
      const ep = functionEndpoint('keywords_data.engA_ads.ad_traffic_by_keywords', job.mode);
      const extra = { bid: job.bid, match: job.match, ...(job.date_interval ? { date_interval: job.date_interval } : {}), ...job.params, ...priorityOf(job.mode, job.priority) };
      return packed(ep, job.keywords, job.keywords_per_task, places(job.locations, job.languages), extra);
    }
    case 'trends': {
      const ep = endpoint(`keywords_data.svc_trends.${job.function}.live`);
      const dates = { ...(job.date_from ? { date_from: job.date_from } : {}), ...(job.date_to ? { date_to: job.date_to } : {}) };
      // Written order kept: the five keywords of one request are compared with each other.
      return packed(ep, job.keywords, ep.maxKeywordsPerTask ?? 5, places(job.locations, []), { ...dates, ...job.params }, false);
    }
    case 'labs': {
      const ep = endpoint(`svc_labs.engA.${job.function}.live`);
      const input = LABS_FUNCTIONS[job.function];
      const pl = places(job.locations, job.languages);
      if (input === 'target') return { specs: perKey(ep, [...new Set(job.targets)], pl, (target) => ({ target }), job.params), repeatsDropped: 0 };
      const { list, repeats } = distinct(job.keywords);
      const body = input === 'keyword' ? (k: string) => ({ keyword: k }) : (k: string) => ({ keywords: [k] });
      return { specs: perKey(ep, list, pl, body, job.params), repeatsDropped: repeats * pl.length };
    }
    case 'backlinks': {
      const ep = endpoint(`backlinks.${job.function}.live`);
      return { specs: perKey(ep, [...new Set(job.targets)], [{}], (target) => ({ target }), job.params), repeatsDropped: 0 };
    }
    case 'on_page': {
      const ep = endpoint('on_page.task_post');
      const specs = [...new Set(job.targets)].map((target) => ({
        endpoint: ep,
        spec: { target, max_crawl_pages: job.max_crawl_pages, ...job.params, ...(job.priority === 2 ? { priority: 2 } : {}) },
      }));
      return { specs, repeatsDropped: 0 };
    }
    case 'ai_volume': {
      const ep = endpoint('ai_optimization.ai_keyword_data.keywords_search_volume.live');
      return packed(ep, job.keywords, ep.maxKeywordsPerTask ?? 1000, places(job.locations, job.languages), {});
    }
    case 'llm_responses': {
      const ep = endpoint('ai_optimization.chat_llm.llm_responses.live');
      const specs = job.models.flatMap((model_name) =>
        [...new Set(job.prompts)].map((user_prompt) => ({
          endpoint: ep,
          spec: {
            user_prompt,
            model_name,
            ...(job.max_output_tokens !== undefined ? { max_output_tokens: job.max_output_tokens } : {}),
            ...(job.web_search !== undefined ? { web_search: job.web_search } : {}),
            ...job.params,
          },
        })),
      );
      return { specs, repeatsDropped: 0 };
    }
    case 'embeddings':
      return { specs: [], repeatsDropped: 0 };
    case 'endpoint':
      return endpointJob(job);
  }
}

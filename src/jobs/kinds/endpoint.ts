import { z } from 'zod';
import { encodeServiceKeyword, endpoint, ENDPOINTS } from '../../catalog/index.js';
import { jobBase, prioritySchema } from '../base-fields.js';
import { closestEndpoints, fillTemplate, JOB_ENDPOINTS } from '../endpoint-template.js';
import { chunks, distinct, places, type Spec } from '../expand.js';
import { defineJobKind, type FieldPath, type PreflightIssue, type ReadReference } from '../job-kind.js';
import { checkAiPlaces, lighthouseVersions, type PlaceSet } from '../reference.js';
import { AI_VOLUME_ENDPOINT } from './ai-volume.js';
import { keywordsFileOutsideSchema, keywordsFileSchema } from '../keyword-fields.js';
import { languageSchema, locationSchema, targetSchema } from '../place-fields.js';

/**
 * A job for any catalog endpoint that creates tasks or answers live: a parameter template
 * expanded over keywords, targets, locations and languages, and/or explicit task bodies.
 * `{keyword}` and `{target}` in a string value are replaced per task; a value that is
 * exactly `"{keywords}"` becomes a list of keywords, packed up to the endpoint's limit.
 */
const endpointJobSchema = z
  .strictObject({
    ...jobBase('endpoint', 'any task or live endpoint of the catalog (`pipeline endpoints` lists them).'),
    endpoint: z
      .string()
      .min(1, 'a catalog endpoint id')
      .describe("Catalog id of a `task_post` or `live` endpoint, e.g. 'merchant.engA.products.task_post' (see `pipeline endpoints`)."),
    params: z
      .record(z.string(), z.unknown())
      .default({})
      .describe(
        'Template of one task body; `{keyword}`, `{target}` in strings are filled per task, `"{keywords}"` becomes a keyword list.',
      ),
    keywords: z
      .array(z.string().refine((s) => s.trim().length > 0, { error: 'must not be empty' }))
      .default([])
      .describe('Values of `{keyword}` / `{keywords}`.'),
    keywords_file: keywordsFileSchema,
    keywords_file_outside: keywordsFileOutsideSchema,
    keywords_per_task: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .optional()
      .describe('Keywords a `"{keywords}"` list holds; default the endpoint limit (else 100).'),
    targets: z.array(targetSchema).default([]).describe('Values of `{target}`.'),
    locations: z.array(locationSchema).default([]).describe('Each adds location_code or location_name to every task (a cross product).'),
    languages: z.array(languageSchema).default([]).describe('Each adds language_code or language_name to every task (a cross product).'),
    priority: prioritySchema.optional(),
    tasks: z
      .array(z.record(z.string(), z.unknown()))
      .default([])
      .describe('Explicit task bodies, posted as written (after the template expansion, if any).'),
  })
  .superRefine(checkEndpointJob)
  .describe('Generic job: any catalog endpoint with a parameter template.');

type EndpointJob = z.output<typeof endpointJobSchema>;

function checkEndpointJob(
  j: {
    endpoint: string;
    params: Record<string, unknown>;
    tasks: Record<string, unknown>[];
    keywords: string[];
    keywords_file?: string | undefined;
    targets: string[];
    locations: Array<number | string>;
    languages: string[];
  },
  ctx: z.RefinementCtx,
): void {
  const ep = JOB_ENDPOINTS.find((e) => e.id === j.endpoint);
  if (!ep) {
    const near = closestEndpoints(j.endpoint);
    ctx.addIssue({
      code: 'custom',
      path: ['endpoint'],
      message: `'${j.endpoint}' is not a task_post or live endpoint of the catalog${near.length ? `; close: ${near.join(', ')}` : ''} (run \`pipeline endpoints\`)`,
    });
    return;
  }
  const text = JSON.stringify(j.params);
  const usesKeyword = text.includes('{keyword}') || text.includes('"{keywords}"');
  const usesTarget = text.includes('{target}');
  if (usesKeyword && j.keywords.length === 0 && !j.keywords_file)
    ctx.addIssue({
      code: 'custom',
      path: ['keywords'],
      message: 'the template uses {keyword}/{keywords}: give keywords or a keywords_file',
    });
  if (usesTarget && j.targets.length === 0)
    ctx.addIssue({ code: 'custom', path: ['targets'], message: 'the template uses {target}: give targets' });
  if (!usesKeyword && (j.keywords.length > 0 || j.keywords_file))
    ctx.addIssue({ code: 'custom', path: ['keywords'], message: 'keywords are given but params never uses {keyword} or "{keywords}"' });
  if (!usesTarget && j.targets.length > 0)
    ctx.addIssue({ code: 'custom', path: ['targets'], message: 'targets are given but params never uses {target}' });
  const templated = Object.keys(j.params).length > 0 || usesKeyword || usesTarget;
  if (!templated && j.tasks.length === 0)
    ctx.addIssue({ code: 'custom', path: ['tasks'], message: 'nothing to post: give params (a template) or tasks' });
  // Each explicit task, and the template filled with sample values, against the endpoint's own rules.
  const check = (body: Record<string, unknown>, path: PropertyKey[]) => {
    if (!ep.request) return;
    const r = ep.request.safeParse(body);
    if (!r.success) for (const iss of r.error.issues) ctx.addIssue({ code: 'custom', path: [...path, ...iss.path], message: iss.message });
  };
  j.tasks.forEach((t, i) => check(t, ['tasks', i]));
  if (templated) {
    const place = {
      ...(j.locations[0] === undefined
        ? {}
        : typeof j.locations[0] === 'number'
          ? { location_code: j.locations[0] }
          : { location_name: j.locations[0] }),
      ...(j.languages[0] === undefined ? {} : { language_code: 'en' }),
    };
    check(
      {
        ...place,
        ...(fillTemplate(j.params, { keyword: 'sample', keywords: ['sample'], target: 'example.com' }) as Record<string, unknown>),
      },
      ['params'],
    );
  }
}

/** A template's expansion: places × keyword sets × targets, then the explicit tasks as written. */
function expandEndpointJob(job: EndpointJob): { specs: Spec[]; repeatsDropped: number } {
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
          specs.push({
            endpoint: ep,
            spec: {
              ...place,
              ...(fillTemplate(job.params, { ...ks, ...(target ? { target } : {}) }) as Record<string, unknown>),
              ...extra,
            },
          });
        }
      }
    }
  }
  for (const t of job.tasks) specs.push({ endpoint: ep, spec: { ...t } });
  return { specs, repeatsDropped };
}

/**
 * What the service's lists refuse in a generic job: for the AI keyword data endpoint, its
 * locations and languages (the job's lists and each task body's fields); for a lighthouse
 * endpoint, a `version` that `on_page/lighthouse/versions` does not list.
 */
async function preflightEndpointJob(at: number, job: EndpointJob, read: ReadReference): Promise<PreflightIssue[]> {
  const ep = ENDPOINTS.find((e) => e.id === job.endpoint);
  const issues: PreflightIssue[] = [];
  const bodies = [job.params, ...job.tasks].map((body, k) => ({
    body,
    at: (k === 0 ? ['jobs', at, 'params'] : ['jobs', at, 'tasks', k - 1]) as FieldPath,
  }));
  if (ep?.id === AI_VOLUME_ENDPOINT) {
    const sets: PlaceSet[] = [{ locations: job.locations, languages: job.languages, at: ['jobs', at] }];
    for (const { body, at: where } of bodies) {
      const loc = body.location_code ?? body.location_name;
      const lang = body.language_code ?? body.language_name;
      if (typeof loc === 'number' || typeof loc === 'string' || typeof lang === 'string') {
        sets.push({
          locations: typeof loc === 'number' || typeof loc === 'string' ? [loc] : [],
          languages: typeof lang === 'string' ? [lang] : [],
          at: where,
          fields: true,
        });
      }
    }
    issues.push(...(await checkAiPlaces(read, sets)));
  }
  if (ep?.resultKind === 'lighthouse') {
    let versions: string[] | undefined;
    for (const { body, at: where } of bodies) {
      if (body.version === undefined) continue;
      versions ??= await lighthouseVersions(read);
      if (versions.length === 0 || versions.includes(String(body.version))) continue;
      issues.push({
        path: [...where, 'version'],
        rule: `lighthouse version '${String(body.version)}' is not offered (on_page/lighthouse/versions lists ${versions.join(', ')}); nothing was posted`,
      });
    }
  }
  return issues;
}

/** The generic job: any task or live endpoint of the catalog, by template or explicit tasks. */
export const endpointJob = defineJobKind({
  kind: 'endpoint',
  schema: endpointJobSchema,
  expand: expandEndpointJob,
  async preflight(jobs, read) {
    const issues: PreflightIssue[] = [];
    for (const { at, job } of jobs) issues.push(...(await preflightEndpointJob(at, job, read)));
    return { issues, warnings: [] };
  },
});

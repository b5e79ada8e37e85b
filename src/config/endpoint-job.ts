import { z } from 'zod';
import { ENDPOINTS, type Endpoint } from '../catalog/index.js';
import { labelsSchema, prioritySchema, targetSchema } from './job-fields.js';
import { jobNameSchema, keywordsFileOutsideSchema, keywordsFileSchema, languageSchema, locationSchema } from './serp-job.js';

/** Endpoints a generic job may buy from: anything that creates a task or answers live under `/v3`. */
export const JOB_ENDPOINTS: readonly Endpoint[] = ENDPOINTS.filter((e) => e.api !== 'v1' && (e.mode === 'task_post' || e.mode === 'live') && e.body === 'tasks');

/** Placeholders a template's string values may hold. */
export const PLACEHOLDERS = ['{keyword}', '{keywords}', '{target}'] as const;

/** The three catalog ids nearest to a mistyped one (edit distance), for the error message. */
function closest(id: string): string[] {
  return JOB_ENDPOINTS.map((e) => ({ id: e.id, d: editDistance(id, e.id) }))
    .sort((a, b) => a.d - b.d)
    .slice(0, 3)
    .map((x) => x.id);
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * A job for any catalog endpoint that creates tasks or answers live: a parameter template
 * expanded over keywords, targets, locations and languages, and/or explicit task bodies.
 * `{keyword}` and `{target}` in a string value are replaced per task; a value that is
 * exactly `"{keywords}"` becomes a list of keywords, packed up to the endpoint's limit.
 */
export const endpointJobSchema = z
  .strictObject({
    kind: z.literal('endpoint').describe('Job kind. `endpoint`: any task or live endpoint of the catalog (`pipeline endpoints` lists them).'),
    name: jobNameSchema,
    labels: labelsSchema,
    endpoint: z
      .string()
      .min(1, 'a catalog endpoint id')
      .describe("Catalog id of a `task_post` or `live` endpoint, e.g. 'merchant.engA.products.task_post' (see `pipeline endpoints`)."),
    params: z
      .record(z.string(), z.unknown())
      .default({})
      .describe('Template of one task body; `{keyword}`, `{target}` in strings are filled per task, `"{keywords}"` becomes a keyword list.'),
    keywords: z.array(z.string().refine((s) => s.trim().length > 0, { error: 'must not be empty' })).default([]).describe('Values of `{keyword}` / `{keywords}`.'),
    keywords_file: keywordsFileSchema,
    keywords_file_outside: keywordsFileOutsideSchema,
    keywords_per_task: z.number().int().min(1).max(1000).optional().describe('Keywords a `"{keywords}"` list holds; default the endpoint limit (else 100).'),
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

function checkEndpointJob(
  j: { endpoint: string; params: Record<string, unknown>; tasks: Record<string, unknown>[]; keywords: string[]; keywords_file?: string | undefined; targets: string[]; locations: Array<number | string>; languages: string[] },
  ctx: z.RefinementCtx,
): void {
  const ep = JOB_ENDPOINTS.find((e) => e.id === j.endpoint);
  if (!ep) {
    const near = closest(j.endpoint);
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
  if (usesKeyword && j.keywords.length === 0 && !j.keywords_file) ctx.addIssue({ code: 'custom', path: ['keywords'], message: 'the template uses {keyword}/{keywords}: give keywords or a keywords_file' });
  if (usesTarget && j.targets.length === 0) ctx.addIssue({ code: 'custom', path: ['targets'], message: 'the template uses {target}: give targets' });
  if (!usesKeyword && (j.keywords.length > 0 || j.keywords_file)) ctx.addIssue({ code: 'custom', path: ['keywords'], message: 'keywords are given but params never uses {keyword} or "{keywords}"' });
  if (!usesTarget && j.targets.length > 0) ctx.addIssue({ code: 'custom', path: ['targets'], message: 'targets are given but params never uses {target}' });
  const templated = Object.keys(j.params).length > 0 || usesKeyword || usesTarget;
  if (!templated && j.tasks.length === 0) ctx.addIssue({ code: 'custom', path: ['tasks'], message: 'nothing to post: give params (a template) or tasks' });
  // Each explicit task, and the template filled with sample values, against the endpoint's own rules.
  const check = (body: Record<string, unknown>, path: PropertyKey[]) => {
    if (!ep.request) return;
    const r = ep.request.safeParse(body);
    if (!r.success) for (const iss of r.error.issues) ctx.addIssue({ code: 'custom', path: [...path, ...iss.path], message: iss.message });
  };
  j.tasks.forEach((t, i) => check(t, ['tasks', i]));
  if (templated) {
    const place = {
      ...(j.locations[0] === undefined ? {} : typeof j.locations[0] === 'number' ? { location_code: j.locations[0] } : { location_name: j.locations[0] }),
      ...(j.languages[0] === undefined ? {} : { language_code: 'en' }),
    };
    check({ ...place, ...(fillTemplate(j.params, { keyword: 'sample', keywords: ['sample'], target: 'example.com' }) as Record<string, unknown>) }, ['params']);
  }
}

/** Replaces the placeholders in every string of a template (deeply). */
export function fillTemplate(v: unknown, with_: { keyword?: string; keywords?: string[]; target?: string }): unknown {
  if (v === '{keywords}') return with_.keywords ?? [];
  if (typeof v === 'string') {
    return v.replaceAll('{keyword}', with_.keyword ?? '{keyword}').replaceAll('{target}', with_.target ?? '{target}');
  }
  if (Array.isArray(v)) return v.map((x) => fillTemplate(x, with_));
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fillTemplate(x, with_)]));
  return v;
}

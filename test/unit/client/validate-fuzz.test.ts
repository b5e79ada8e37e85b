import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as catalog from '../../../src/catalog/index.js';
import { ENDPOINTS, formatSpecDatetime, type Endpoint } from '../../../src/catalog/index.js';
import { validateBody, validateTasks } from '../../../src/client/index.js';
import { EtlError } from '../../../src/errors.js';

const NOW = new Date('2026-11-21T12:00:00Z');
const dt = (hoursAgo: number) => formatSpecDatetime(new Date(NOW.getTime() - hoursAgo * 3_600_000));

/** One valid request per schema of the catalog; the first test proves each is accepted. */
const SAMPLES = new Map<unknown, Record<string, unknown>>([
  [
    catalog.serpTaskSchema,
    { keyword: 'running shoes', location_code: 2840, language_code: 'en', device: 'mobile', os: 'ios', depth: 20, tag: 't1' },
  ],
  [catalog.serpTaskLooseSchema, { keyword: 'running shoes', location_name: 'United States', language_code: 'en', tag: 't1' }],
  [catalog.eventsTaskSchema, { keyword: 'concerts', location_code: 2840, date_range: 'week', max_crawl_pages: 2, depth: 20, tag: 't1' }],
  [catalog.looseTaskSchema, { target: 'example.com', tag: 't1' }],
  [catalog.searchVolumeTaskSchema, { keywords: ['a', 'b'], location_code: 2840, language_code: 'en', tag: 't1' }],
  [catalog.keywordsForSiteTaskSchema, { target: 'example.com', tag: 't1' }],
  [catalog.keywordsForKeywordsTaskSchema, { keywords: ['a'], tag: 't1' }],
  [catalog.trendsTaskSchema, { keywords: ['a', 'b'], location_code: 2840, date_from: '2026-01-01', date_to: '2026-06-01' }],
  [catalog.aiKeywordVolumeTaskSchema, { keywords: ['a'], location_code: 2840, language_code: 'en', tag: 't1' }],
  [
    catalog.llmResponseTaskSchema,
    { user_prompt: 'hello', model_name: 'chat-model', max_output_tokens: 256, top_p: 0.5, web_search: false },
  ],
  [catalog.errorsQuerySchema, { limit: 10, offset: 0, filtered_function: 'postback_url', datetime_from: dt(48), datetime_to: dt(1) }],
  [catalog.idListQuerySchema, { datetime_from: dt(48), datetime_to: dt(1), limit: 10, sort: 'desc', include_metadata: true }],
  [catalog.webhookResendTaskSchema, { id: '01234567-89ab-4cde-8f01-23456789abcd' }],
  [
    catalog.onPageResourcesTaskSchema,
    { id: 'task', limit: 10, filters: [['resource_type', '=', 'image']], order_by: ['size,desc'], tag: 't1' },
  ],
  [catalog.onPageReadTaskSchema, { id: 'task', filters: [['status_code', '>=', 400]], tag: 't1' }],
  [catalog.onPageTaskSchema, { target: 'example.com', tag: 't1' }],
  [catalog.chatBodySchema, { model: 'chat5.6-terra', messages: [{ role: 'user', content: 'hi' }] }],
  [
    catalog.imageBodySchema,
    { model: 'imgmodel-3.1-flash-image', messages: [{ role: 'user', content: 'a cat' }], n: 1, stream: false, size: '1024x1024' },
  ],
  [catalog.embeddingsBodySchema, { model: 'text-embedding-3-small', input: ['a'], dimensions: 64, encoding_format: 'float' }],
]);

const withSchema = ENDPOINTS.filter((e) => e.request);

function sample(ep: Endpoint): Record<string, unknown> {
  const s =
    SAMPLES.get(ep.request) ?? (ep.id === 'on_page.lighthouse.live.json' ? { url: 'https://example.com/', version: '9.6.8' } : undefined);
  if (!s) throw new Error(`no sample for ${ep.id}`);
  return s;
}

/** Validates like the client does; returns the problems, or [] when accepted. Anything else thrown fails the test. */
function check(ep: Endpoint, value: unknown): string[] {
  try {
    if (ep.body === 'object') validateBody(ep, value);
    else validateTasks(ep, [value], { now: NOW });
    return [];
  } catch (err) {
    if (!(err instanceof EtlError) || err.code !== 'ETL_REQUEST_INVALID') throw err;
    return err.context.problems as string[];
  }
}

const LINE_TASK = /^task 0: [^\s:][^:]*: \S/;
const LINE_BODY = /^[^\s:][^:]*: \S/;

describe('request validation never crashes and always names a field', () => {
  it('accepts a valid request at every endpoint that takes a body', () => {
    const refused = withSchema.map((ep) => [ep.id, check(ep, sample(ep))] as const).filter(([, p]) => p.length > 0);
    expect(refused).toEqual([]);
  });

  it('answers any JSON value with acceptance or problems of the form "field: rule"', () => {
    fc.assert(
      fc.property(fc.constantFrom(...withSchema), fc.jsonValue(), (ep, value) => {
        const problems = check(ep, value);
        for (const p of problems) expect(p).toMatch(ep.body === 'object' ? LINE_BODY : LINE_TASK);
      }),
      { numRuns: 3000, seed: 42 },
    );
  });

  it('names the field when one field of a valid request gets a value of the wrong type', () => {
    // Fields the schema declares (passthrough fields of open schemas may take anything).
    const declared = (ep: Endpoint) => Object.keys((ep.request as unknown as { shape?: object }).shape ?? {});
    const cases = withSchema.flatMap((ep) =>
      Object.keys(sample(ep))
        .filter((k) => declared(ep).includes(k))
        .map((k) => [ep, k] as const),
    );
    expect(cases.length).toBeGreaterThan(withSchema.length);
    fc.assert(
      fc.property(
        fc.constantFrom(...cases),
        fc.oneof(fc.dictionary(fc.string(), fc.integer(), { minKeys: 1 }), fc.constant(null)),
        ([ep, k], wrong) => {
          const value = { ...sample(ep), [k]: wrong };
          const problems = check(ep, value);
          expect(problems.length, `${ep.id} ${k}`).toBeGreaterThan(0);
          expect(
            problems.some((p) => p.includes(k)),
            `${ep.id} ${k}: ${problems.join(' | ')}`,
          ).toBe(true);
        },
      ),
      { numRuns: 2000, seed: 7 },
    );
  });

  it('mutated valid requests (fields dropped or set to random JSON) are accepted or refused with named fields', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...withSchema),
        fc.array(fc.tuple(fc.string({ maxLength: 30 }), fc.option(fc.jsonValue())), { maxLength: 4 }),
        fc.boolean(),
        (ep, edits, useKnown) => {
          const value: Record<string, unknown> = { ...sample(ep) };
          const known = Object.keys(value);
          for (const [key, v] of edits) {
            const k = useKnown && known.length ? known[key.length % known.length]! : key;
            if (v === null) delete value[k];
            else value[k] = v;
          }
          for (const p of check(ep, value)) expect(p).toMatch(ep.body === 'object' ? LINE_BODY : LINE_TASK);
        },
      ),
      { numRuns: 3000, seed: 11 },
    );
  });
});

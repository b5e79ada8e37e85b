import { ENDPOINTS } from '../spec/index.js';
import type { HandlerReply, RouteContext } from '../handlers/context.js';
import { COUNTRIES, LANGUAGES } from '../serp-query.js';
import { UTILITY_APIS, utilityReply } from './utility-reply.js';

const LANGUAGE_NAMES = Object.fromEntries(Object.entries(LANGUAGES).map(([name, code]) => [code, name[0]!.toUpperCase() + name.slice(1)]));

/** Lighthouse versions the emulator offers; the first is the default (spec, Versioning 4). */
export const LIGHTHOUSE_VERSIONS = ['12.6.1', '12.4.0', '11.7.1'] as const;

/** `GET /v3/appendix/status`: every api and endpoint the emulator serves, all `ok`. Free. */
export function handleApiStatus(ctx: RouteContext): HandlerReply {
  const byApi = new Map<string, Set<string>>(UTILITY_APIS.map((a) => [a, new Set<string>()]));
  for (const e of ENDPOINTS) {
    const api = e.path.split('/')[2] ?? '';
    if (!byApi.has(api)) byApi.set(api, new Set());
    byApi.get(api)!.add(e.path);
  }
  const result = [...byApi].map(([api, paths]) => ({
    api,
    status: 'ok',
    endpoints: [...paths, `/v3/${api}/errors`, `/v3/${api}/id_list`].map((endpoint) => ({ endpoint, status: 'ok' })),
  }));
  return utilityReply(ctx, 'status', result);
}

/** `GET /v3/{api}/endpoints`: paths that create tasks (task_post and live) of that api. Free. */
export function handleEndpointList(ctx: RouteContext): HandlerReply {
  const api = ctx.params[0] ?? '';
  const result = ENDPOINTS.filter((e) => e.path.split('/')[2] === api && (e.mode === 'task_post' || e.mode === 'live')).map((e) => ({
    path: e.path,
  }));
  return utilityReply(ctx, 'endpoints', result);
}

/** The location records of the lists (countries only). */
export function locationRecords() {
  return COUNTRIES.map((c) => ({
    location_code: c.code,
    location_name: c.name,
    location_code_parent: null,
    country_iso_code: c.gl.toUpperCase(),
    location_type: 'Country',
  }));
}

/**
 * `GET /v3/serp/{engine}/locations` and `.../events/locations`: every country and city, as the
 * service's list holds both; `locations.ai` lists the countries with their default URLs. Free.
 */
export function handleLocations(ctx: RouteContext): HandlerReply {
  if (!ctx.ai) return utilityReply(ctx, 'locations', [...locationRecords(), ...COUNTRIES.flatMap((c) => cityRecords(c.gl))]);
  const withUrls = locationRecords().map((r) => ({
    ...r,
    default_url: `https://www.${(ctx.params[0] ?? 'engA').toLowerCase()}.com/?gl=${r.country_iso_code.toLowerCase()}`,
  }));
  return utilityReply(ctx, 'locations', withUrls);
}

/** A few cities per country for `locations/{country_code}` (the emulator's small gazetteer). */
const CITIES: Readonly<Record<string, readonly string[]>> = {
  us: ['New York', 'Los Angeles', 'Chicago', 'Houston', 'Seattle'],
  gb: ['London', 'Manchester', 'Birmingham'],
  de: ['Berlin', 'Hamburg', 'Munich'],
  fr: ['Paris', 'Lyon', 'Marseille'],
  ca: ['Toronto', 'Vancouver', 'Montreal'],
};

/**
 * `GET /v3/serp/engA/locations/{country_code}`: the cities of a country (codes derived
 * from the country's), empty for a country the gazetteer lacks. With `.ai`, the list
 * form; the countries list (`locations.ai`) carries each country's default URL.
 */
export function handleCountryLocations(ctx: RouteContext): HandlerReply {
  return utilityReply(ctx, 'locations', cityRecords((ctx.params[1] ?? '').toLowerCase()));
}

/** The gazetteer's cities of the country `cc` (lower case), as location records. */
function cityRecords(cc: string) {
  const country = COUNTRIES.find((c) => c.gl === cc);
  return (CITIES[cc] ?? []).map((name, i) => ({
    location_code: (country?.code ?? 0) * 1000 + i + 1,
    location_name: `${name},${country?.name ?? cc.toUpperCase()}`,
    location_code_parent: country?.code ?? null,
    country_iso_code: cc.toUpperCase(),
    location_type: 'City',
  }));
}

/** `GET /v3/serp/{engine}/languages`. Free. */
export function handleLanguages(ctx: RouteContext): HandlerReply {
  const result = Object.entries(LANGUAGE_NAMES).map(([language_code, language_name]) => ({ language_name, language_code }));
  return utilityReply(ctx, 'languages', result);
}

/** `GET .../locations_and_languages` (labs, AI keyword data): locations with their languages. Free. */
export function handleLocationsAndLanguages(ctx: RouteContext): HandlerReply {
  const result = COUNTRIES.map((c) => {
    const codes = [...new Set([c.language, 'en'])];
    return {
      ...locationRecords().find((l) => l.location_code === c.code),
      available_languages: codes.map((code) => ({
        available_sources: ['engA'],
        language_name: LANGUAGE_NAMES[code] ?? code,
        language_code: code,
      })),
    };
  });
  return utilityReply(ctx, 'locations_and_languages', result);
}

/** `GET /v3/on_page/lighthouse/versions`. Free. */
export function handleLighthouseVersions(ctx: RouteContext): HandlerReply {
  const available_versions = LIGHTHOUSE_VERSIONS.map((version, i) => ({ version, default: i === 0 }));
  return utilityReply(ctx, 'versions', [{ available_versions }]);
}

/** Status codes and messages (result-shapes.md), for `GET /v3/appendix/errors`. */
const STATUS_CODES: ReadonlyArray<[number, string]> = [
  [20000, 'Ok.'],
  [20100, 'Task Created.'],
  [40000, 'You can set only one task at a time.'],
  [40006, 'You can set no more than 100 tasks at a time.'],
  [40100, 'You are not authorized to access this resource.'],
  [40101, 'Internal engine error.'],
  [40102, 'No Search Results.'],
  [40103, 'Task execution failed. Please, resubmit the task.'],
  [40200, 'Payment Required.'],
  [40202, 'Rate Limit Per Minute Exceeded.'],
  [40203, 'Cost Limit Exceeded.'],
  [40400, 'Not Found.'],
  [40401, 'Task Not Found.'],
  [40402, 'Invalid Path.'],
  [40403, 'Results Expired.'],
  [40501, 'Invalid Field.'],
  [40502, 'POST Data Is Empty.'],
  [40503, 'POST data is invalid.'],
  [40506, 'Unknown Fields.'],
  [40601, 'Task Handed.'],
  [40602, 'Task In Queue.'],
  [50000, 'Internal Error.'],
  [50301, 'Third-party API is unavailable.'],
  [50401, 'Internal Timeout.'],
];

/** `GET /v3/appendix/errors`: the service's status codes and messages. Free. */
export function handleStatusCodes(ctx: RouteContext): HandlerReply {
  return utilityReply(
    ctx,
    'errors',
    STATUS_CODES.map(([code, message]) => ({ code, message })),
  );
}

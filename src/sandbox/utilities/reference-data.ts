import { ENDPOINTS } from '../../catalog/index.js';
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
  const result = ENDPOINTS.filter((e) => e.path.split('/')[2] === api && (e.mode === 'task_post' || e.mode === 'live')).map((e) => ({ path: e.path }));
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

/** `GET /v3/serp/{engine}/locations` and `.../events/locations`. Free. */
export function handleLocations(ctx: RouteContext): HandlerReply {
  return utilityReply(ctx, 'locations', locationRecords());
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
      available_languages: codes.map((code) => ({ available_sources: ['engA'], language_name: LANGUAGE_NAMES[code] ?? code, language_code: code })),
    };
  });
  return utilityReply(ctx, 'locations_and_languages', result);
}

/** `GET /v3/on_page/lighthouse/versions`. Free. */
export function handleLighthouseVersions(ctx: RouteContext): HandlerReply {
  const available_versions = LIGHTHOUSE_VERSIONS.map((version, i) => ({ version, default: i === 0 }));
  return utilityReply(ctx, 'versions', [{ available_versions }]);
}

import { COUNTRIES, LANGUAGES, type Country } from './locations.js';
import { decodeKeyword } from './spec/index.js';

/** The engines of the spec's SERP pairs (`engA` to `engG`). */
export type SerpEngine = 'engA' | 'engB' | 'engC' | 'engD' | 'engE' | 'engF' | 'engG';

/** A posted SERP task as the emulator reads it (fields per spec/limits.ts `SERP_TASK`). */
export interface SerpParams {
  keyword: string;
  location_code?: number;
  location_name?: string;
  location_coordinate?: string;
  language_code?: string;
  language_name?: string;
  device?: 'desktop' | 'mobile';
  os?: string;
  depth?: number;
  se_domain?: string;
  [field: string]: unknown;
}

/** Everything the generator needs, resolved once: defaults filled in, the day fixed. */
export interface SerpQuery {
  engine: SerpEngine | string;
  keyword: string;
  /** Null when the location was given by a name or coordinate the emulator does not know. */
  locationCode: number | null;
  /** Stable text of the location as posted, for hashing. */
  locationKey: string;
  languageCode: string;
  countryCode: string;
  device: 'desktop' | 'mobile';
  os: string;
  depth: number;
  seDomain: string;
  /** UTC day (`yyyy-mm-dd`) the SERP was taken on; ranks move from one day to the next. */
  day: string;
  /** `yyyy-mm-dd hh:mm:ss +00:00`, the result's `datetime`. */
  datetime: string;
}

export { COUNTRIES, LANGUAGES, type Country };

/** `yyyy-mm-dd hh:mm:ss +00:00` in UTC, the service's date-time format. */
export function formatServiceDate(at: Date): string {
  return `${at.toISOString().slice(0, 19).replace('T', ' ')} +00:00`;
}

/**
 * Decodes the keyword as the service does (`%##`, `+` → space), fills the defaults the service would (desktop, windows or android, depth 10, the
 * location's official language, the engine's domain) and fixes the UTC day at `at`.
 */
export function resolveSerpQuery(engine: string, params: SerpParams, at: Date): SerpQuery {
  const country = findCountry(params);
  const device = params.device ?? 'desktop';
  const languageCode =
    params.language_code ?? (params.language_name ? LANGUAGES[params.language_name.toLowerCase()] : undefined) ?? country?.language ?? 'en';
  return {
    engine,
    // The service decodes `%##` and turns `+` into a space before it searches (spec, events task_post).
    keyword: decodeKeyword(params.keyword),
    locationCode: params.location_code ?? country?.code ?? null,
    locationKey: String(params.location_code ?? params.location_name ?? params.location_coordinate ?? ''),
    languageCode,
    countryCode: country?.gl ?? 'us',
    device,
    os: params.os ?? (device === 'mobile' ? 'android' : 'windows'),
    depth: params.depth ?? 10,
    seDomain: params.se_domain ?? `${engine.toLowerCase()}.com`,
    day: at.toISOString().slice(0, 10),
    datetime: formatServiceDate(at),
  };
}

function findCountry(params: SerpParams): Country | undefined {
  if (params.location_code !== undefined) return COUNTRIES.find((c) => c.code === params.location_code);
  if (params.location_name !== undefined) {
    const name = params.location_name.toLowerCase();
    return COUNTRIES.find((c) => c.name.toLowerCase() === name);
  }
  return undefined;
}

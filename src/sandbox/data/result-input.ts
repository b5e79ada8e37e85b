import type { RankProfiles } from '../rank-walk.js';
import type { Endpoint } from '../spec/index.js';
import { COUNTRIES } from '../serp-query.js';

/** What a result generator reads: the task as posted, the day it ran, the seed. */
export interface ResultInput {
  seed: number;
  endpoint: Endpoint;
  params: Record<string, unknown>;
  at: Date;
  /** Share of SERPs that drift (serp-drift.ts); default 0. */
  drift?: number;
  /** Domains placed in SERPs by a rank distribution (rank-walk.ts); default none. */
  rankProfiles?: RankProfiles;
}

/** The posted location code, or the code of a known location name, or 2840. */
export function locationOf(params: Record<string, unknown>): number {
  if (typeof params.location_code === 'number') return params.location_code;
  if (typeof params.location_name === 'string') {
    const name = params.location_name.toLowerCase();
    const c = COUNTRIES.find((x) => x.name.toLowerCase() === name);
    if (c) return c.code;
  }
  return 2840;
}

/** The posted language code, or the location's language. */
export function languageOf(params: Record<string, unknown>): string {
  if (typeof params.language_code === 'string') return params.language_code;
  const loc = locationOf(params);
  return COUNTRIES.find((c) => c.code === loc)?.language ?? 'en';
}

/** The posted keywords (a `keywords` array or a single `keyword`), lower-cased. */
export function keywordsOf(params: Record<string, unknown>): string[] {
  if (Array.isArray(params.keywords)) return params.keywords.filter((k): k is string => typeof k === 'string').map((k) => k.toLowerCase());
  if (typeof params.keyword === 'string') return [params.keyword.toLowerCase()];
  return [];
}

/** The posted target (domain or URL) without scheme, or a default. */
export function targetOf(params: Record<string, unknown>): string {
  const t = typeof params.target === 'string' ? params.target : typeof params.url === 'string' ? params.url : 'example.com';
  return t.replace(/^https?:\/\//, '').replace(/\/.*$/, '') || 'example.com';
}

/** `yyyy-mm-dd hh:mm:ss +00:00`. */
export function serviceDate(at: Date): string {
  return `${at.toISOString().slice(0, 19).replace('T', ' ')} +00:00`;
}

/** `yyyy-mm-dd hh-mm-ss +00:00`: the spec's form for error records' `datetime` and resources' `fetch_time`. */
export function dashedServiceDate(at: Date): string {
  return serviceDate(at).replace(/(\d{2}):(\d{2}):(\d{2}) /, '$1-$2-$3 ');
}

import { endpoint, ENDPOINTS, type Endpoint } from '../catalog/index.js';

/**
 * The building blocks a job kind expands with: places (location × language), keyword
 * normalization and de-duplication, packing keywords to the endpoint's limit, and the
 * endpoint of a function in a mode. Pure functions of the job and the catalog.
 */

/** One task body to post to one endpoint, before its tag is added. */
export type Spec = { endpoint: Endpoint; spec: Record<string, unknown> };

/** A job's task bodies, and how many keyword repeats packing dropped (per location and language). */
export interface JobSpecs {
  specs: Spec[];
  repeatsDropped: number;
}

const LANGUAGE_CODE = /^[a-z]{2,3}(-[a-z]{2,4})?$/i;

/** U+200B zero-width space, U+2060 word joiner, U+FEFF zero-width no-break space, U+00AD soft hyphen. */
const INVISIBLE = /[\u200b\u2060\ufeff\u00ad]/g;

/** Lower-cases and collapses whitespace, as the service does, so duplicates are found before paying. */
export function normalizeKeyword(k: string): string {
  // NFC first: 'café' typed and 'cafe' + a combining accent pasted are one keyword, bought once.
  // Invisible characters a paste carries and no query means (zero-width space, word joiner, a BOM
  // inside the text, soft hyphen) go too; the joiners that shape Persian words and emoji stay.
  return k.normalize('NFC').replace(INVISIBLE, '').trim().replace(/\s+/g, ' ').toLowerCase();
}

/** The request fields of one place: `location_code` or `location_name`, `language_code` or `language_name`. */
export function placeFields(location: number | string | undefined, language: string | undefined): Record<string, unknown> {
  return {
    ...(location === undefined ? {} : typeof location === 'number' ? { location_code: location } : { location_name: location }),
    ...(language === undefined
      ? {}
      : LANGUAGE_CODE.test(language)
        ? { language_code: language.toLowerCase() }
        : { language_name: language }),
  };
}

/** Each location × language pair; an empty list stands for "not given" (one pass without the field). */
export function places(locations: readonly (number | string)[], languages: readonly string[]): Record<string, unknown>[] {
  const locs = locations.length ? locations : [undefined];
  const langs = languages.length ? languages : [undefined];
  return locs.flatMap((l) => langs.map((g) => placeFields(l, g)));
}

/** Distinct normalized keywords in first-seen order, and how many repeats were dropped. */
export function distinct(keywords: readonly string[]): { list: string[]; repeats: number } {
  const list = [...new Set(keywords.map(normalizeKeyword))];
  return { list, repeats: keywords.length - list.length };
}

/** `list` cut into pieces of at most `size`. */
export function chunks<T>(list: readonly T[], size: number): T[][] {
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

/** `{ priority: 2 }` for a queued high-priority job; live calls take no priority. */
export function priorityOf(mode: 'standard' | 'live', priority: 1 | 2): Record<string, unknown> {
  return mode === 'standard' && priority === 2 ? { priority: 2 } : {};
}

/** Keywords packed as many to a task as the endpoint takes at one price (sorted, so a re-run packs alike). */
export function packed(
  ep: Endpoint,
  keywords: readonly string[],
  per: number,
  pl: Record<string, unknown>[],
  extra: Record<string, unknown>,
  sort = true,
): JobSpecs {
  const { list, repeats } = distinct(keywords);
  if (sort) list.sort();
  const specs = pl.flatMap((place) => chunks(list, per).map((ks) => ({ endpoint: ep, spec: { keywords: ks, ...place, ...extra } })));
  return { specs, repeatsDropped: repeats * pl.length };
}

/** One task per value (keyword or target) and place. */
export function perKey<T>(
  ep: Endpoint,
  values: readonly T[],
  pl: Record<string, unknown>[],
  body: (v: T) => Record<string, unknown>,
  extra: Record<string, unknown>,
): Spec[] {
  return pl.flatMap((place) => values.map((v) => ({ endpoint: ep, spec: { ...body(v), ...place, ...extra } })));
}

import type { FieldPath, PreflightIssue, ReadReference } from './job-kind.js';

/**
 * The service's free reference lists that job preflights read, parsed. The spec does not show
 * every list's shape, so each parser takes only the fields it names and skips the rest.
 */

/** A location of the AI keyword data list: its code, its name, the languages offered there (codes and names, lower-cased). */
export interface AiLocation {
  code: number | null;
  name: string;
  languages: Set<string>;
}

/** `ai_keyword_data/locations_and_languages` by `code:<n>` and `name:<lower-case name>`. */
export async function aiLocations(read: ReadReference): Promise<Map<string, AiLocation>> {
  const out = new Map<string, AiLocation>();
  for (const item of await read('ai_optimization.ai_keyword_data.locations_and_languages')) {
    const l = item as { location_code?: unknown; location_name?: unknown; available_languages?: unknown } | null;
    if (!l) continue;
    const languages = new Set<string>();
    for (const g of Array.isArray(l.available_languages) ? l.available_languages : []) {
      const lang = g as { language_code?: unknown; language_name?: unknown } | null;
      if (typeof lang?.language_code === 'string') languages.add(lang.language_code.toLowerCase());
      if (typeof lang?.language_name === 'string') languages.add(lang.language_name.toLowerCase());
    }
    const loc: AiLocation = {
      code: typeof l.location_code === 'number' ? l.location_code : null,
      name: typeof l.location_name === 'string' ? l.location_name : '',
      languages,
    };
    if (loc.code !== null) out.set(`code:${loc.code}`, loc);
    if (loc.name) out.set(`name:${loc.name.toLowerCase()}`, loc);
  }
  return out;
}

/** `available_versions[].version` of `on_page/lighthouse/versions`. */
export async function lighthouseVersions(read: ReadReference): Promise<string[]> {
  return (await read('on_page.lighthouse.versions')).flatMap((r) => {
    const list = (r as { available_versions?: unknown } | null)?.available_versions;
    return Array.isArray(list)
      ? list.flatMap((v) => (typeof (v as { version?: unknown })?.version === 'string' ? [(v as { version: string }).version] : []))
      : [];
  });
}

/**
 * The model names of `llm_responses/models`: every `model_name`, `latest_version` and
 * `versions` string of its items (a base name selects its latest version), the base names,
 * and the names the list itself flags as reasoning (the only source trusted for it: a name
 * like 'o1' or 'thinking' proves nothing either way).
 */
export async function offeredLlmModels(read: ReadReference): Promise<{ names: Set<string>; bases: string[]; reasoning: Set<string> }> {
  const names = new Set<string>();
  const bases: string[] = [];
  const reasoning = new Set<string>();
  for (const item of await read('ai_optimization.chat_llm.llm_responses.models')) {
    const m = item as { model_name?: unknown; latest_version?: unknown; versions?: unknown; reasoning?: unknown } | null;
    const all: string[] = [];
    if (typeof m?.model_name === 'string') {
      all.push(m.model_name);
      bases.push(m.model_name);
    }
    if (typeof m?.latest_version === 'string') all.push(m.latest_version);
    if (Array.isArray(m?.versions)) for (const v of m.versions) if (typeof v === 'string') all.push(v);
    for (const n of all) {
      names.add(n);
      if (m?.reasoning === true) reasoning.add(n);
    }
  }
  return { names, bases, reasoning };
}

/** Locations and languages asked together: a job's lists (`fields` false), or one task body's fields. */
export interface PlaceSet {
  locations: readonly (number | string)[];
  languages: readonly string[];
  at: FieldPath;
  fields?: boolean;
}

/**
 * AI keyword data places: each location of a set must be in the list, and each language
 * offered at each of its locations. A list that names nothing leaves the check to the service.
 */
export async function checkAiPlaces(read: ReadReference, sets: readonly PlaceSet[]): Promise<PreflightIssue[]> {
  if (!sets.some((s) => s.locations.length > 0 || s.languages.length > 0)) return [];
  const list = await aiLocations(read);
  if (list.size === 0) return [];
  const issues: PreflightIssue[] = [];
  for (const s of sets) {
    const known: AiLocation[] = [];
    for (const [k, l] of s.locations.entries()) {
      const loc = list.get(typeof l === 'number' ? `code:${l}` : `name:${l.toLowerCase()}`);
      const path: FieldPath = s.fields ? [...s.at, typeof l === 'number' ? 'location_code' : 'location_name'] : [...s.at, 'locations', k];
      if (loc) known.push(loc);
      else
        issues.push({ path, rule: `location ${JSON.stringify(l)} is not in ai_keyword_data/locations_and_languages; nothing was posted` });
    }
    for (const [k, g] of s.languages.entries()) {
      const missing = known.filter((loc) => !loc.languages.has(g.toLowerCase()));
      if (missing.length === 0) continue;
      const path: FieldPath = s.fields
        ? [...s.at, /^[a-z]{2}(-[a-z]{2,4})?$/i.test(g) ? 'language_code' : 'language_name']
        : [...s.at, 'languages', k];
      const where = missing.map((m) => `${m.name || m.code} (offers ${[...m.languages].join(', ')})`).join('; ');
      issues.push({
        path,
        rule: `language '${g}' is not offered by ai_keyword_data/locations_and_languages for ${where}; nothing was posted`,
      });
    }
  }
  return issues;
}

/**
 * SERP places: each location of a set must be in `serp/engA/locations` (by `location_code`, or
 * by `location_name` in any case), and each language in `serp/engA/languages` (by code or name).
 * The service answers a task for a place it does not know with an error or, as the emulator
 * does, with another place's results: either way after the job's other tasks were paid for. A
 * list that names nothing leaves its half of the check to the service (a warning).
 */
export async function checkSerpPlaces(
  read: ReadReference,
  sets: readonly PlaceSet[],
): Promise<{ issues: PreflightIssue[]; warnings: string[] }> {
  const issues: PreflightIssue[] = [];
  const warnings: string[] = [];
  if (sets.some((s) => s.locations.length > 0)) {
    const codes = new Set<number>();
    const names = new Set<string>();
    for (const item of await read('serp.engA.locations')) {
      const l = item as { location_code?: unknown; location_name?: unknown } | null;
      if (typeof l?.location_code === 'number') codes.add(l.location_code);
      if (typeof l?.location_name === 'string') names.add(l.location_name.toLowerCase());
    }
    if (codes.size === 0 && names.size === 0)
      warnings.push('the serp/engA/locations list named no location; SERP locations are left to the service to check');
    else
      for (const s of sets)
        for (const [k, l] of s.locations.entries()) {
          if (typeof l === 'number' ? codes.has(l) : names.has(l.toLowerCase())) continue;
          issues.push({
            path: [...s.at, 'locations', k],
            rule: `location ${JSON.stringify(l)} is not in serp/engA/locations (a location_code, or a location_name such as 'United States' or 'London,England,United Kingdom'); nothing was posted`,
          });
        }
  }
  if (sets.some((s) => s.languages.length > 0)) {
    const known = new Set<string>();
    for (const item of await read('serp.engA.languages')) {
      const g = item as { language_code?: unknown; language_name?: unknown } | null;
      if (typeof g?.language_code === 'string') known.add(g.language_code.toLowerCase());
      if (typeof g?.language_name === 'string') known.add(g.language_name.toLowerCase());
    }
    if (known.size === 0) warnings.push('the serp/engA/languages list named no language; SERP languages are left to the service to check');
    else
      for (const s of sets)
        for (const [k, g] of s.languages.entries()) {
          if (known.has(g.toLowerCase())) continue;
          issues.push({
            path: [...s.at, 'languages', k],
            rule: `language '${g}' is not in serp/engA/languages (a code like 'en' or a name like 'English'); nothing was posted`,
          });
        }
  }
  return { issues, warnings };
}

import { endpoint, ENDPOINTS } from '../catalog/index.js';
import type { ServiceClient } from '../client/index.js';
import type { Pipeline } from '../config/index.js';
import { positionsIn } from '../config/positions.js';
import { ConfigError } from '../errors.js';

/** The AI keyword data endpoint whose locations and languages come from its own list (spec). */
const AI_VOLUME = 'ai_optimization.ai_keyword_data.keywords_search_volume.live';

type Path = (string | number)[];
/** Locations and languages asked together: a job's lists (`fields` false), or one task body's fields. */
interface PlaceSet {
  locations: readonly (number | string)[];
  languages: readonly string[];
  at: Path;
  fields?: boolean;
}
interface Issue {
  path: Path;
  field: string;
  rule: string;
}

/** A location of the AI keyword data list: its code, its name, the languages offered there (codes and names, lower-cased). */
interface AiLocation {
  code: number | null;
  name: string;
  languages: Set<string>;
}

/**
 * What the reference endpoints say, read once per run and only when a job needs it (both
 * calls are free): the AI keyword data locations with their languages, and the lighthouse
 * versions.
 */
export class ReferenceData {
  #ai: Promise<Map<string, AiLocation>> | undefined;
  #versions: Promise<string[]> | undefined;

  constructor(private readonly client: ServiceClient) {}

  /** Locations by `code:<n>` and `name:<lower-case name>`. */
  aiLocations(): Promise<Map<string, AiLocation>> {
    this.#ai ??= this.client.call(endpoint('ai_optimization.ai_keyword_data.locations_and_languages')).then((call) => {
      const out = new Map<string, AiLocation>();
      for (const t of call.envelope.tasks ?? []) {
        for (const item of t.result ?? []) {
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
      }
      return out;
    });
    return this.#ai;
  }

  /** `available_versions[].version` of `on_page/lighthouse/versions`. */
  lighthouseVersions(): Promise<string[]> {
    this.#versions ??= this.client.call(endpoint('on_page.lighthouse.versions')).then((call) =>
      (call.envelope.tasks ?? []).flatMap((t) =>
        (t.result ?? []).flatMap((r) => {
          const list = (r as { available_versions?: unknown } | null)?.available_versions;
          return Array.isArray(list)
            ? list.flatMap((v) => (typeof (v as { version?: unknown })?.version === 'string' ? [(v as { version: string }).version] : []))
            : [];
        }),
      ),
    );
    return this.#versions;
  }
}

/**
 * Refuses, before anything is bought, AI keyword data locations and languages the service's
 * `ai_keyword_data/locations_and_languages` list does not hold (a language must be offered
 * for the location it is asked with), and lighthouse `version`s that
 * `on_page/lighthouse/versions` does not list: each with file, line and field, as the other
 * config errors. Lists that name nothing leave the check to the service. Returns nothing;
 * throws a `ConfigError` with every problem at once.
 */
export async function checkReferenceData(ref: ReferenceData, pipeline: Pipeline, file: string): Promise<void> {
  const issues: Issue[] = [];
  for (const [i, job] of pipeline.jobs.entries()) {
    if (job.kind === 'ai_volume') {
      await checkPlaces(ref, issues, [{ locations: job.locations, languages: job.languages, at: ['jobs', i] }]);
    } else if (job.kind === 'endpoint') {
      const ep = ENDPOINTS.find((e) => e.id === job.endpoint);
      if (ep?.id === AI_VOLUME) {
        const sets: PlaceSet[] = [{ locations: job.locations, languages: job.languages, at: ['jobs', i] }];
        for (const [k, body] of [job.params, ...job.tasks].entries()) {
          const at: Path = k === 0 ? ['jobs', i, 'params'] : ['jobs', i, 'tasks', k - 1];
          const loc = body.location_code ?? body.location_name;
          const lang = body.language_code ?? body.language_name;
          if (typeof loc === 'number' || typeof loc === 'string' || typeof lang === 'string') {
            sets.push({
              locations: typeof loc === 'number' || typeof loc === 'string' ? [loc] : [],
              languages: typeof lang === 'string' ? [lang] : [],
              at,
              fields: true,
            });
          }
        }
        await checkPlaces(ref, issues, sets);
      }
      if (ep?.resultKind === 'lighthouse') {
        for (const [k, body] of [job.params, ...job.tasks].entries()) {
          if (body.version === undefined) continue;
          const versions = await ref.lighthouseVersions();
          if (versions.length === 0 || versions.includes(String(body.version))) continue;
          const path: Path = k === 0 ? ['jobs', i, 'params', 'version'] : ['jobs', i, 'tasks', k - 1, 'version'];
          issues.push({
            path,
            field: fieldName(path),
            rule: `lighthouse version '${String(body.version)}' is not offered (on_page/lighthouse/versions lists ${versions.join(', ')}); nothing was posted`,
          });
        }
      }
    }
  }
  if (issues.length === 0) return;
  const where = await positionsIn(file);
  throw new ConfigError(issues.map((x) => ({ file, ...(where?.(x.path) ?? { line: 0, column: 0 }), field: x.field, rule: x.rule })));
}

/** Each location of a set must be listed, and each language offered at each of its locations. */
async function checkPlaces(ref: ReferenceData, issues: Issue[], sets: readonly PlaceSet[]): Promise<void> {
  if (!sets.some((s) => s.locations.length > 0 || s.languages.length > 0)) return;
  const list = await ref.aiLocations();
  if (list.size === 0) return;
  for (const s of sets) {
    const known: AiLocation[] = [];
    for (const [k, l] of s.locations.entries()) {
      const loc = list.get(typeof l === 'number' ? `code:${l}` : `name:${l.toLowerCase()}`);
      const path: Path = s.fields ? [...s.at, typeof l === 'number' ? 'location_code' : 'location_name'] : [...s.at, 'locations', k];
      if (loc) known.push(loc);
      else
        issues.push({
          path,
          field: fieldName(path),
          rule: `location ${JSON.stringify(l)} is not in ai_keyword_data/locations_and_languages; nothing was posted`,
        });
    }
    for (const [k, g] of s.languages.entries()) {
      const missing = known.filter((loc) => !loc.languages.has(g.toLowerCase()));
      if (missing.length === 0) continue;
      const path: Path = s.fields
        ? [...s.at, /^[a-z]{2}(-[a-z]{2,4})?$/i.test(g) ? 'language_code' : 'language_name']
        : [...s.at, 'languages', k];
      const where = missing.map((m) => `${m.name || m.code} (offers ${[...m.languages].join(', ')})`).join('; ');
      issues.push({
        path,
        field: fieldName(path),
        rule: `language '${g}' is not offered by ai_keyword_data/locations_and_languages for ${where}; nothing was posted`,
      });
    }
  }
}

function fieldName(path: Path): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

import { COUNTRIES } from '../catalog/index.js';
import { TASK_PIPELINES_SQL, type Warehouse } from '../warehouse/index.js';
import { Dictionary } from './dictionary.js';
import type { KeywordIndex } from './payload.js';

/** Options every section reads: the scope of the report and its size limits. */
export interface ReportScope {
  /** Only these pipelines (default: every pipeline in the warehouse). */
  pipelines?: readonly string[];
  /** Check dates (and spend days) in the window: the last N of them. */
  days: number;
  /** Keywords that get rank lines, by search volume. */
  topKeywords: number;
  /** Closest competitors drawn beside the tracked domains on each keyword. */
  competitors: number;
  /** Domains of the visibility chart besides the tracked ones, by visibility. */
  visibilityDomains: number;
}

const LOCATION_NAMES = new Map(COUNTRIES.map((c) => [c.code, c.name]));

/**
 * What the sections share while the payload is built: the warehouse, the scope, the
 * dictionaries of pipelines, locations, domains and keywords, the tracked domains, and
 * notes for the page. Sections add the keywords they mention with what the filters need.
 */
export class ReportContext {
  readonly pipelines = new Dictionary();
  readonly domains = new Dictionary();
  readonly keywords = new Dictionary();
  readonly locationCodes: number[] = [];
  readonly notes: string[] = [];
  /** Tracked domains per pipeline name (hostnames, lower case, no `www.`). */
  tracked = new Map<string, Set<string>>();
  trackedSource = '';
  private readonly kwPipelines: Set<number>[] = [];
  private readonly kwLocations: Set<number>[] = [];
  private readonly kwDomains: Set<number>[] = [];
  private readonly pipelineLocations: Set<number>[] = [];

  constructor(
    readonly wh: Warehouse,
    readonly scope: ReportScope,
  ) {}

  /** A SQL condition keeping rows of the pipelines in scope (`report_scope` holds them). */
  inScope(column: string): string {
    return this.scope.pipelines?.length ? `${column} in (select pipeline from report_scope)` : 'true';
  }

  /** Creates the temporary tables the section queries join: task → pipeline, and the scope. */
  async prepare(): Promise<void> {
    await this.wh.run(`create or replace temp table report_task_pipeline as
      ${TASK_PIPELINES_SQL}`);
    await this.wh.run('create or replace temp table report_scope (pipeline varchar)');
    for (const p of this.scope.pipelines ?? []) await this.wh.run('insert into report_scope values (?)', [p]);
    await this.wh.run('create or replace temp table report_tracked (pipeline varchar, domain varchar)');
  }

  /** Writes the tracked domains to `report_tracked` for the section queries. */
  async storeTracked(): Promise<void> {
    await this.wh.run('delete from report_tracked');
    for (const [p, ds] of this.tracked) for (const d of ds) await this.wh.run('insert into report_tracked values (?, ?)', [p, d]);
  }

  location(code: number): number {
    let i = this.locationCodes.indexOf(code);
    if (i < 0) i = this.locationCodes.push(code) - 1;
    return i;
  }

  pipeline(name: string | null | undefined): number {
    const i = this.pipelines.id(name ?? '(unknown)');
    while (this.pipelineLocations.length <= i) this.pipelineLocations.push(new Set());
    return i;
  }

  /** Registers a keyword and what it has data in; returns its id. */
  keyword(name: string, facts: { pipelines?: Iterable<number>; location?: number; domains?: Iterable<number> } = {}): number {
    const k = this.keywords.id(name);
    while (this.kwPipelines.length <= k) {
      this.kwPipelines.push(new Set());
      this.kwLocations.push(new Set());
      this.kwDomains.push(new Set());
    }
    for (const p of facts.pipelines ?? []) {
      this.kwPipelines[k]!.add(p);
      if (facts.location !== undefined) this.pipelineLocations[p]!.add(facts.location);
    }
    if (facts.location !== undefined) this.kwLocations[k]!.add(facts.location);
    for (const d of facts.domains ?? []) this.kwDomains[k]!.add(d);
    return k;
  }

  /** True when `domain` is tracked by any of `pipelines` (by name). */
  isTracked(domain: string, pipelines: readonly string[]): boolean {
    return pipelines.some((p) => this.tracked.get(p)?.has(domain));
  }

  locationsPayload(): { code: number; name: string }[] {
    return this.locationCodes.map((code) => ({ code, name: LOCATION_NAMES.get(code) ?? `location ${code}` }));
  }

  keywordIndex(): KeywordIndex {
    const sorted = (s: Set<number>) => [...s].sort((a, b) => a - b);
    return {
      names: this.keywords.values,
      pipelines: this.kwPipelines.map(sorted),
      locations: this.kwLocations.map(sorted),
      domains: this.kwDomains.map(sorted),
    };
  }

  trackedPayload(): number[][] {
    return this.pipelines.values.map((p) => [...(this.tracked.get(p) ?? [])].sort().map((d) => this.domains.id(d)));
  }

  pipelineLocationsPayload(): number[][] {
    return this.pipelines.values.map((_, i) => [...(this.pipelineLocations[i] ?? [])].sort((a, b) => a - b));
  }
}

/** Rounds to `digits` decimals, for numbers a chart shows (keeps the JSON short). */
export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

import { z } from 'zod';

/** The series and tracked domain a rank alert is about. */
export interface RankSubject {
  keyword: string;
  locationCode: number;
  languageCode: string;
  device: string;
  engine: string;
  domain: string;
}

/** One tracked domain on one check a run collected, against the series' previous successful check. */
export interface RankObservation extends RankSubject {
  checkDate: string;
  /** null on the first check of a series: nothing to compare with. */
  previousCheckDate: string | null;
  daysSincePrevious: number | null;
  /** Absolute rank now; null when the domain is absent from this check (a lost row). */
  rank: number | null;
  /** Absolute rank at the previous check; null when it did not rank there. */
  previousRank: number | null;
  url: string | null;
  previousUrl: string | null;
  /**
   * How deep each check looked: the depth it asked for, or the deepest rank on its page
   * when deeper (or when the depth is unknown). Absent from a check means "beyond" this.
   */
  depth: number | null;
  previousDepth: number | null;
  /** Domains ranked on this check's page; 0 is an empty page, treated as a failed check. */
  pageRanked: number;
}

/** What the run rules look at: the run's end and its money. */
export interface RunFacts {
  pipeline: string;
  runId: string;
  /** `yyyy-mm-dd`, the UTC day the run started: the alerts' date. */
  runDate: string;
  state: 'completed' | 'partial' | 'failed';
  stopReason: string | null;
  /** What `pipeline plan` priced the run at (CNY); null when it could not be priced. */
  estimateCny: number | null;
  /** What the run was charged, net of refunds (CNY). */
  chargedNetCny: number;
}

/** What a rank rule found on one observation; `values` replaces the places before and after (default: the ranks). */
export interface RankFinding {
  threshold: string;
  /** What the domain did, e.g. `entered the top 10`. */
  what: string;
  values?: { before: string; after: string };
}

/** What a run rule found on one run. */
export interface RunFinding {
  before: string | null;
  after: string;
  threshold: string;
  /** One line of Slack mrkdwn. */
  message: string;
}

/**
 * A rule of the `alerts:` block: its key in the pipeline file, the value it takes there (a zod
 * schema whose description is the rule's documentation) and what it looks at. A rank rule
 * checks each tracked domain on each check of the run against its previous check; a run rule
 * the run's end and money; the schedule rule (missed_nights) is evaluated by the scheduler's
 * missed-nights check, which needs the pipeline's schedule.
 */
export type AlertRule<N extends string = string, S extends z.ZodType = z.ZodType> =
  | { name: N; option: S; scope: 'rank'; check(o: RankObservation, value: z.output<S>): RankFinding | null }
  | { name: N; option: S; scope: 'run'; check(f: RunFacts, value: z.output<S>): RunFinding | null }
  | { name: N; option: S; scope: 'schedule' };

/** A rank rule, its check's value typed by its option. */
export function rankRule<const N extends string, S extends z.ZodType>(r: {
  name: N;
  option: S;
  check(o: RankObservation, value: z.output<S>): RankFinding | null;
}) {
  return { ...r, scope: 'rank' as const };
}

/** A run rule, its check's value typed by its option. */
export function runRule<const N extends string, S extends z.ZodType>(r: {
  name: N;
  option: S;
  check(f: RunFacts, value: z.output<S>): RunFinding | null;
}) {
  return { ...r, scope: 'run' as const };
}

/** A rule's value: a number of top places, 1 to the deepest check. */
export const topN = (what: string) =>
  z.number().int('a whole number of places').min(1, 'at least 1').max(700, 'at most 700 (the deepest check)').describe(what);
/** A rule's value: a number of places moved. */
export const places = (what: string) => z.number().int('a whole number of places').min(1, 'at least 1').describe(what);
/** A rule's value: on or off. */
export const on = (what: string) => z.boolean().describe(what);

/** true / false when the checks say so; undefined when they did not look deep enough to tell. */
type Known = boolean | undefined;

/** Whether the domain ranked within the top `n` at a check that looked `depth` deep. */
export function within(rank: number | null, depth: number | null, n: number): Known {
  if (rank !== null) return rank <= n;
  return depth !== null && depth >= n ? false : undefined;
}

/** A place as a message shows it: `#3`, `beyond 20` (absent from a check that looked 20 deep) or `not ranked`. */
export function place(rank: number | null, depth: number | null): string {
  if (rank !== null) return `#${rank}`;
  return depth !== null ? `beyond ${depth}` : 'not ranked';
}

/** An amount as run messages show it: `1.2345 CNY`. */
export const cny = (n: number) => `${n.toFixed(4)} CNY`;

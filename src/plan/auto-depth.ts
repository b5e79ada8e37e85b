import { createHash } from 'node:crypto';
import { decodeServiceKeyword } from '../catalog/index.js';
import type { AutoDepth } from '../jobs/index.js';

/**
 * The rules of `depth: auto`, per series (keyword × location × language × device × engine),
 * from what the warehouse knows of the series (its checks before tonight's run):
 * - never looked at max_depth, or its sweep night → max_depth (`auto:sweep`);
 * - a tracked domain ranked on the series' last check at r → ceil((r + margin)/10)×10, the
 *   deepest over the tracked domains, at most max_depth (`auto:seen`);
 * - none ranked there → the first block of 10 (`auto:shallow`);
 * - after collection, a series bought at `auto:seen` whose tracked domain (ranked at the last
 *   check) is absent within tonight's depth is bought again at max_depth (`auto:escalation`);
 * - a competitor (`auto_depth.competitors`) is followed to competitor_depth instead: it counts
 *   only when its last rank was within it, raises the depth at most to it, and its fall buys
 *   the series again to competitor_depth; deeper, it is measured on sweeps and wherever your
 *   own domains' depth reaches.
 * Pure functions: the history is read by the warehouse (depthHistory) and handed in.
 */

export type DepthReason = 'auto:seen' | 'auto:shallow' | 'auto:sweep' | 'auto:escalation';
export const DEPTH_REASONS: readonly DepthReason[] = ['auto:seen', 'auto:shallow', 'auto:sweep', 'auto:escalation'];

/** A tracked domain's rank on a check. */
export interface SeenRank {
  domain: string;
  rank: number;
}

/** What the warehouse knows of one series before tonight. */
export interface SeriesHistory {
  /** The last check's date (`yyyy-mm-dd`). */
  lastDate: string;
  /** The deepest any of its checks looked (a series never looked at max_depth is swept). */
  deepest: number;
  /** Domains ranked on the last check (any; the job's tracked ones are picked out). */
  seen: readonly SeenRank[];
}

/** The history of every series the warehouse has checked, by seriesKey, and tonight's night number. */
export interface DepthHistory {
  series: ReadonlyMap<string, SeriesHistory>;
  /** UTC day number of tonight: with a series' hash, it picks the series' sweep nights. */
  night: number;
}

/** The depth chosen for one task, and why; `seen` are the tracked domains the escalation checks. */
export interface AutoChoice {
  depth: number;
  reason: DepthReason;
  series: string;
  seen: readonly SeenRank[];
}

/** UTC day number of a date. */
export function nightOf(at: Date): number {
  return Math.floor(at.getTime() / 86_400_000);
}

/**
 * The key of a SERP task's series, as rank_history names it: the keyword searched, the
 * location code, language code, device and engine. Null when the task names its place by
 * name (rank_history keys by code): such a series is swept every night.
 */
export function seriesKeyOf(endpointId: string, spec: Readonly<Record<string, unknown>>): string | null {
  const engine = endpointId.split('.')[1];
  if (typeof spec.keyword !== 'string' || typeof spec.location_code !== 'number' || typeof spec.language_code !== 'string') return null;
  const device = typeof spec.device === 'string' ? spec.device : 'desktop';
  return seriesKey(decodeServiceKeyword(spec.keyword), spec.location_code, spec.language_code.toLowerCase(), device, engine ?? '');
}

export function seriesKey(keyword: string, location: number, language: string, device: string, engine: string): string {
  return [keyword, location, language, device, engine].join('\u0000');
}

/** Whether tonight is the series' sweep night: a hash of the series mod N against the night mod N. */
export function isSweepNight(series: string, night: number, every: number): boolean {
  const h = createHash('sha256').update(series).digest().readUInt32BE(0);
  return h % every === ((night % every) + every) % every;
}

/** Rounds a rank plus the margin up to a block of 10, at most max_depth. */
export function depthFor(rank: number, s: AutoDepth): number {
  return Math.min(s.max_depth, Math.max(10, Math.ceil((rank + s.margin) / 10) * 10));
}

/** How deep a tracked domain is followed: max_depth for your own, competitor_depth for a competitor. */
export function reachOf(domain: string, s: AutoDepth): number {
  return s.competitors.includes(domain) ? Math.min(s.competitor_depth, s.max_depth) : s.max_depth;
}

/**
 * Whether a domain's last rank binds tonight's depth: always for your own (a rank past max_depth
 * is looked for at max_depth), within competitor_depth for a competitor.
 */
export function followed(x: SeenRank, s: AutoDepth): boolean {
  return !s.competitors.includes(x.domain) || x.rank <= reachOf(x.domain, s);
}

/** Tonight's depth of one series of an `auto` job. */
export function chooseDepth(
  s: AutoDepth,
  tracked: readonly string[],
  series: string | null,
  history: DepthHistory | undefined,
): AutoChoice {
  const key = series ?? '';
  const h = series === null ? undefined : history?.series.get(series);
  const seen = (h?.seen ?? []).filter((x) => tracked.includes(x.domain) && followed(x, s));
  const sweep = { depth: s.max_depth, reason: 'auto:sweep' as const, series: key, seen };
  if (!h || h.deepest < s.max_depth || history === undefined) return sweep;
  if (isSweepNight(key, history.night, s.sweep_every)) return sweep;
  if (seen.length === 0) return { depth: Math.min(10, s.max_depth), reason: 'auto:shallow', series: key, seen };
  const depth = Math.max(...seen.map((x) => Math.min(depthFor(x.rank, s), reachOf(x.domain, s))));
  return { depth, reason: 'auto:seen', series: key, seen };
}

/**
 * The depth a series bought tonight must be bought again at, or 0: a tracked domain ranked at
 * its last check is absent within tonight's depth (`found`: the tracked domains ranked tonight),
 * so the series is bought to the deepest such domain's reach (max_depth for your own,
 * competitor_depth for a competitor), when that is deeper than tonight's.
 */
export function escalationDepth(choice: AutoChoice, s: AutoDepth, found: ReadonlySet<string>): number {
  if (choice.reason !== 'auto:seen') return 0;
  const reach = Math.max(0, ...choice.seen.filter((x) => !found.has(x.domain)).map((x) => reachOf(x.domain, s)));
  return reach > choice.depth ? reach : 0;
}

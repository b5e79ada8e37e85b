import { createRng } from './prng.js';
import { applyDrift, serpDrift, unseenItem, type SerpDrift } from './serp-drift.js';
import { serpFeatures } from './serp-features.js';
import { serpMedia } from './serp-media.js';
import { buildOrganicItem } from './serp-organic.js';
import { resolveSerpQuery, type SerpParams, type SerpQuery } from './serp-query.js';
import type { RankProfiles } from './rank-walk.js';
import { rankSites } from './serp-ranking.js';
import type { SerpAdvancedResult, SerpItem, SerpItemBody } from './serp-types.js';

/** Inputs of one simulated SERP. */
export interface SerpResultOptions {
  seed: number;
  engine: string;
  params: SerpParams;
  /** When the SERP was taken: its UTC day decides the daily rank drift. */
  at: Date;
  /** Include every item type of result-shapes.md (the sample id's answer). */
  full?: boolean;
  /** Share of SERPs that drift (serp-drift.ts); default 0, never on the full sample. */
  drift?: number;
  /** Domains placed by a rank distribution (rank-walk.ts); default none. */
  rankProfiles?: RankProfiles;
}

/**
 * Builds the advanced result element of a SERP organic task: `depth` organic items
 * (rank_group 1..depth) with a few non-organic items interleaved, numbered by
 * rank_absolute in page order. Deterministic for (seed, engine, keyword, location,
 * language, device, depth, UTC day, rank profiles).
 */
export function buildSerpResult(opts: SerpResultOptions): SerpAdvancedResult {
  const resolved = resolveSerpQuery(opts.engine, opts.params, opts.at);
  const q = { ...resolved, depth: Math.min(resolved.depth, organicAvailable(opts.seed, resolved.keyword)) };
  const kw = q.keyword.toLowerCase();
  const organics = rankSites(q, opts.seed, opts.rankProfiles).map((r, i) => buildOrganicItem(r.site, r.page, i + 1, q, opts.seed));
  const drift = opts.full || !opts.drift ? undefined : serpDrift(opts.seed, q, opts.drift);
  const placed = opts.full ? fullLayout(q, organics, opts.seed) : ordinaryLayout(q, organics, opts.seed, drift);
  const driftRng = createRng(opts.seed, 'drift-forms', kw, q.locationKey, q.languageCode, q.engine, q.device, q.day);
  const items = drift ? applyDrift(number(placed), drift, driftRng) : number(placed);
  return {
    keyword: q.keyword,
    type: 'organic',
    se_domain: q.seDomain,
    location_code: q.locationCode,
    language_code: q.languageCode,
    check_url: checkUrl(q),
    datetime: q.datetime,
    spell: null,
    refinement_chips: null,
    item_types: [...new Set(items.map((i) => i.type))],
    se_results_count: resultsCount(q, kw, opts.seed),
    items_count: items.length,
    items,
  };
}

/**
 * How many organic results exist for a keyword: long-tail keywords (seven words or more)
 * have only 20-50, so a deep request returns fewer than `depth` and the unused blocks
 * are refunded; shorter keywords have as many as asked for.
 */
export function organicAvailable(seed: number, keyword: string): number {
  const words = keyword.trim().split(/\s+/).filter(Boolean).length;
  return words >= 7 ? createRng(seed, 'available', keyword.toLowerCase()).int(20, 50) : Number.POSITIVE_INFINITY;
}

/**
 * Features decided per keyword (stable), ads per day (they rotate); now and then an item
 * type the published shapes do not list (serp-drift.ts), drawn from its own stream so the
 * rest of the page is the same with or without it.
 */
function ordinaryLayout(q: SerpQuery, organics: SerpItemBody[], seed: number, drift?: SerpDrift): SerpItemBody[] {
  const kw = q.keyword.toLowerCase();
  const rng = createRng(seed, 'features', kw, q.locationKey, q.languageCode, q.engine, q.device);
  const ads = createRng(seed, 'ads', kw, q.locationKey, q.languageCode, q.engine, q.device, q.day);
  const before: SerpItemBody[] = [];
  const after = new Map<number, SerpItemBody[]>();
  const insert = (afterOrganic: number, item: SerpItemBody) => {
    if (afterOrganic < organics.length) after.set(afterOrganic, [...(after.get(afterOrganic) ?? []), item]);
  };
  if (ads.chance(0.35)) for (let i = ads.int(1, 3); i > 0; i--) before.push(serpFeatures.paid(q.keyword, ads));
  const top = organics[rng.int(0, Math.min(2, organics.length - 1))];
  if (top && rng.chance(0.3)) before.push(serpFeatures.featuredSnippet(q.keyword, top, rng));
  if (rng.chance(0.6)) insert(rng.int(1, 3), serpFeatures.peopleAlsoAsk(q.keyword, organics.slice(0, 5), rng));
  if (rng.chance(0.25)) insert(rng.int(4, 7), serpMedia.carousel('video', q.keyword, q.day, rng));
  if (drift?.unseenType) {
    const d = createRng(seed, 'drift-item', kw, q.locationKey, q.languageCode, q.engine, q.device, q.day);
    insert(d.int(1, 5), unseenItem(drift.unseenType, q.keyword, d));
  }
  const tail: SerpItemBody[] = [];
  if (ads.chance(0.2)) tail.push(serpFeatures.paid(q.keyword, ads));
  if (rng.chance(0.9)) tail.push(serpFeatures.relatedSearches(q.keyword, q.day, rng));
  return interleave(before, organics, after, tail);
}

/** The sample answer: every item type once (twice for paid), in a realistic order. */
function fullLayout(q: SerpQuery, organics: SerpItemBody[], seed: number): SerpItemBody[] {
  const rng = createRng(seed, 'sample', q.keyword, q.day);
  const first = organics[0] ?? { type: 'organic' };
  const before = [
    serpFeatures.paid(q.keyword, rng),
    serpMedia.aiOverview(q.keyword, organics),
    serpFeatures.featuredSnippet(q.keyword, first, rng),
    serpMedia.knowledgeGraph(q.keyword, q.day, rng),
  ];
  const after = new Map<number, SerpItemBody[]>([
    [2, [serpMedia.localPack(q.keyword, rng)]],
    [3, [serpFeatures.peopleAlsoAsk(q.keyword, organics.slice(0, 5), rng)]],
    [4, [serpMedia.carousel('top_stories', q.keyword, q.day, rng)]],
    [5, [serpMedia.carousel('video', q.keyword, q.day, rng)]],
    [6, [serpMedia.carousel('images', q.keyword, q.day, rng)]],
  ]);
  const tail = [serpFeatures.paid(q.keyword, rng), serpFeatures.relatedSearches(q.keyword, q.day, rng)];
  return interleave(before, organics, after, tail);
}

function interleave(before: SerpItemBody[], organics: SerpItemBody[], after: Map<number, SerpItemBody[]>, tail: SerpItemBody[]) {
  const out = [...before];
  organics.forEach((o, i) => out.push(o, ...(after.get(i + 1) ?? [])));
  return [...out, ...tail];
}

/** rank_absolute over the page in order, rank_group within each type, and an xpath. */
function number(bodies: SerpItemBody[]): SerpItem[] {
  const groups = new Map<string, number>();
  return bodies.map((body, i) => {
    const rankGroup = (groups.get(body.type) ?? 0) + 1;
    groups.set(body.type, rankGroup);
    const position = body.position ?? 'left';
    const xpath =
      position === 'right'
        ? '/html[1]/body[1]/div[2]/div[2]/div[4]/div[1]/div[1]'
        : `/html[1]/body[1]/div[2]/div[2]/div[3]/div[1]/div[${Math.floor(i / 10) + 1}]/div[${(i % 10) + 1}]/div[1]`;
    const { type, position: _p, ...fields } = body;
    return { type, rank_group: rankGroup, rank_absolute: i + 1, position, xpath, ...fields };
  });
}

function checkUrl(q: SerpQuery): string {
  const qs = new URLSearchParams({ q: q.keyword, num: String(q.depth), hl: q.languageCode, gl: q.countryCode });
  return `https://www.${q.seDomain}/search?${qs.toString()}`;
}

/** Shorter keywords match more pages; the count wobbles a little from day to day. */
function resultsCount(q: SerpQuery, kw: string, seed: number): number {
  const words = kw.split(/\s+/).filter(Boolean).length;
  const base = createRng(seed, 'count', kw, q.locationKey, q.languageCode, q.engine).next();
  const exponent = Math.min(10.2, Math.max(3.5, 9.3 - 0.55 * (words - 1) + (base - 0.5) * 1.2));
  const wobble = 1 + (createRng(seed, 'count-day', kw, q.locationKey, q.engine, q.day).next() - 0.5) * 0.04;
  return Math.round(10 ** exponent * wobble);
}

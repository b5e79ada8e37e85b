import { DOMAIN_POOL, type PoolSite } from './domain-pool.js';
import { keywordTopics } from './keyword-topics.js';
import { firstDrawAfter } from './prng.js';
import {
  dayNumber,
  POOL_MIX,
  PROFILE_MIX,
  profileRank,
  seriesWalkHash,
  walkHash,
  walkUnit,
  walkZ,
  type RankProfiles,
} from './rank-walk.js';
import type { SerpQuery } from './serp-query.js';

/** One organic slot: the site, and which of its pages (0 = its best page). */
export interface RankedSite {
  site: PoolSite;
  page: number;
}

/**
 * How far a pool site's place spreads around its home rank: the place is `home * exp(spread * z)`,
 * the spread growing from the top (where real ranks hold best) to the deep ranks.
 */
const spreadAt = (home: number) => 0.04 + 0.36 * Math.min(1, (home - 1) / 60);
/** How far a deeper page of a site may sit from its place one pool further down. */
const PAGE_JITTER = 20;

/**
 * Orders sites for the organic results of one query on one day.
 *
 * A pool site's home rank for a series comes from its score: its authority, whether it
 * covers the keyword's topic, and a seeded per-keyword relevance (a little of it location-
 * and device-specific). Its place on a day is the home scaled by its walk (rank-walk.ts):
 * small moves most days, now and then a jump, and a site whose place passes 100 leaves the
 * top 100 until it comes back. Page p of a site sits one pool further down per page, so every
 * run of pool-size results holds each site about once and every page of 10 holds distinct
 * domains; depth beyond the pool takes deeper pages of the same sites.
 *
 * A domain with a rank profile (`profiles`) is placed at the rank its own walk gives under
 * that profile, with its best page only; a pool site with a profile leaves the pool.
 */
export function rankSites(q: SerpQuery, seed: number, profiles?: RankProfiles): RankedSite[] {
  const kw = q.keyword.trim().toLowerCase();
  const topics = keywordTopics(kw);
  // Each draw is createRng(seed, ...parts, site.domain, page).next(); the parts before the
  // site are the same for every site, so they are hashed once per query.
  const rel = firstDrawAfter(seed, 'rel', kw);
  const relLoc = firstDrawAfter(seed, 'rel-loc', kw, q.locationKey, q.languageCode, q.engine);
  const relDev = firstDrawAfter(seed, 'rel-dev', kw, q.locationKey, q.languageCode, q.engine, q.device);
  const series = seriesWalkHash(seed, kw, q.locationKey, q.languageCode, q.engine, q.device);
  const day = dayNumber(q.day);
  const profiled = profiles ? Object.keys(profiles) : [];
  const pool = DOMAIN_POOL.filter((site) => !profiled.includes(site.domain));

  const homes = pool
    .map((site) => ({ site, score: score(site) }))
    .sort((a, b) => b.score - a.score || a.site.domain.localeCompare(b.site.domain));
  const placed = homes.map(({ site }, i) => {
    const h = walkHash(series, site.domain);
    return { site, h, at: (i + 1) * Math.exp(spreadAt(i + 1) * walkZ(h, day, POOL_MIX)) };
  });
  // Pages are added one at a time until the next page cannot reach the first `depth` places.
  const least = Math.min(...placed.map((p) => p.at));
  const entries: Array<RankedSite & { at: number }> = [];
  for (let page = 0; placed.length > 0; page++) {
    for (const { site, h, at } of placed)
      entries.push({ site, page, at: at + page * pool.length + (page === 0 ? 0 : PAGE_JITTER * (walkUnit(h, page) - 0.5)) });
    entries.sort((a, b) => a.at - b.at || a.site.domain.localeCompare(b.site.domain) || a.page - b.page);
    const nextFrom = least + (page + 1) * pool.length - PAGE_JITTER / 2;
    if (entries.length >= q.depth && entries[q.depth - 1]!.at < nextFrom) break;
  }
  const out: RankedSite[] = entries.slice(0, q.depth).map(({ site, page }) => ({ site, page }));

  const ranked = profiled
    .map((domain) => ({ domain, rank: profileRank(profiles![domain]!, walkZ(walkHash(series, domain), day, PROFILE_MIX)) }))
    .filter((p) => p.rank <= q.depth)
    .sort((a, b) => a.rank - b.rank || a.domain.localeCompare(b.domain));
  let last = -1;
  for (const { domain, rank } of ranked) {
    last = Math.min(out.length, Math.max(rank - 1, last + 1));
    out.splice(last, 0, { site: profiledSite(domain), page: 0 });
  }
  return out.slice(0, q.depth);

  function score(site: PoolSite): number {
    const onTopic = site.topics.some((t) => topics.has(t)) ? 0.5 : site.topics.includes('general') ? 0.15 : 0;
    const relevance = onTopic + 0.3 * rel(site.domain, 0) + 0.12 * relLoc(site.domain, 0) + 0.08 * relDev(site.domain, 0);
    return 0.3 * site.authority + relevance;
  }
}

/** The pool's own entry for a profiled domain, or a plain site of that name. */
function profiledSite(domain: string): PoolSite {
  const known = DOMAIN_POOL.find((s) => s.domain === domain);
  if (known) return known;
  const label = domain.split('.')[0] ?? domain;
  return { domain, name: label.charAt(0).toUpperCase() + label.slice(1), www: false, authority: 0.5, style: 'guide', topics: ['general'] };
}

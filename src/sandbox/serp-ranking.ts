import { DOMAIN_POOL, type PoolSite } from './domain-pool.js';
import { keywordTopics } from './keyword-topics.js';
import { firstDrawAfter } from './prng.js';
import type { SerpQuery } from './serp-query.js';

/** One organic slot: the site, and which of its pages (0 = its best page). */
export interface RankedSite {
  site: PoolSite;
  page: number;
}

/** How far a site's score drifts from one day to the next (relative to a 0..1 scale). */
const DAILY_DRIFT = 0.035;

/**
 * Orders sites for the organic results of one query on one day. A site's score mixes its
 * authority, whether it covers the keyword's topic, a seeded per-keyword relevance (a
 * little of it location- and device-specific) and a small daily drift, so ranks move a
 * little from day to day.
 * Each block of pool-size results is one pass over the pool, so no domain repeats inside
 * a block: with a pool of 60 the first 60 organic results, and every page of 10, hold
 * distinct domains. Depth beyond the pool takes deeper pages of the same sites.
 */
export function rankSites(q: SerpQuery, seed: number): RankedSite[] {
  const kw = q.keyword.trim().toLowerCase();
  const topics = keywordTopics(kw);
  const day = [kw, q.locationKey, q.languageCode, q.engine, q.device, q.day];
  // Each draw is createRng(seed, ...parts, site.domain, page).next(); the parts before the
  // site are the same for every site, so they are hashed once per query.
  const rel = firstDrawAfter(seed, 'rel', kw);
  const relLoc = firstDrawAfter(seed, 'rel-loc', kw, q.locationKey, q.languageCode, q.engine);
  const relDev = firstDrawAfter(seed, 'rel-dev', kw, q.locationKey, q.languageCode, q.engine, q.device);
  const dayA = firstDrawAfter(seed, 'day-a', ...day);
  const dayB = firstDrawAfter(seed, 'day-b', ...day);
  const out: RankedSite[] = [];
  for (let page = 0; out.length < q.depth; page++) {
    const scored = DOMAIN_POOL.map((site) => ({ site, score: score(site, page) }));
    scored.sort((a, b) => b.score - a.score || a.site.domain.localeCompare(b.site.domain));
    for (const { site } of scored) {
      if (out.length >= q.depth) break;
      out.push({ site, page });
    }
  }
  return out;

  function score(site: PoolSite, page: number): number {
    const onTopic = site.topics.some((t) => topics.has(t)) ? 0.5 : site.topics.includes('general') ? 0.15 : 0;
    const relevance = onTopic + 0.3 * rel(site.domain, page) + 0.12 * relLoc(site.domain, page) + 0.08 * relDev(site.domain, page);
    const drift = (dayA(site.domain, page) + dayB(site.domain, page) - 1) * DAILY_DRIFT;
    return 0.3 * site.authority + relevance + drift;
  }
}

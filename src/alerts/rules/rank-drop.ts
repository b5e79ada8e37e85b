import { places, rankRule } from './rule.js';

export const rankDrop = rankRule({
  name: 'rank_drop',
  option: places('A tracked domain fell by N places or more since its previous check.'),
  check: (o, n) => {
    if (o.previousRank === null) return null;
    // Absent now: it fell at least to just past the depth this check looked.
    const least = o.rank ?? (o.depth !== null ? o.depth + 1 : null);
    if (least === null || least - o.previousRank < n) return null;
    return { threshold: String(n), what: `dropped ${o.rank !== null ? least - o.previousRank : `${least - o.previousRank}+`} places` };
  },
});

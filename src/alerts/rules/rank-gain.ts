import { places, rankRule } from './rule.js';

export const rankGain = rankRule({
  name: 'rank_gain',
  option: places('A tracked domain rose by N places or more since its previous check.'),
  check: (o, n) => {
    if (o.rank === null) return null;
    const from = o.previousRank ?? (o.previousDepth !== null ? o.previousDepth + 1 : null);
    if (from === null || from - o.rank < n) return null;
    return { threshold: String(n), what: `rose ${o.previousRank !== null ? from - o.rank : `${from - o.rank}+`} places` };
  },
});

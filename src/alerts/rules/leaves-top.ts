import { rankRule, topN, within } from './rule.js';

export const leavesTop = rankRule({
  name: 'leaves_top',
  option: topN('A tracked domain ranked within the top N at its previous check and does not now.'),
  check: (o, n) =>
    within(o.previousRank, o.previousDepth, n) === true && within(o.rank, o.depth, n) === false
      ? { threshold: String(n), what: `left the top ${n}` }
      : null,
});

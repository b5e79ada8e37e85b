import { rankRule, topN, within } from './rule.js';

export const entersTop = rankRule({
  name: 'enters_top',
  option: topN('A tracked domain ranks within the top N (absolute rank) and did not at its previous check.'),
  check: (o, n) =>
    within(o.rank, o.depth, n) === true && within(o.previousRank, o.previousDepth, n) === false
      ? { threshold: String(n), what: `entered the top ${n}` }
      : null,
});

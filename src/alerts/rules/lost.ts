import { on, rankRule } from './rule.js';

export const lost = rankRule({
  name: 'lost',
  option: on(
    'A tracked domain ranked at the previous check and is absent from this one (never for a failed check, nor when this check was shallower than its old rank).',
  ),
  check: (o) =>
    o.rank === null && o.previousRank !== null && o.depth !== null && o.previousRank <= o.depth
      ? { threshold: 'true', what: o.depth >= 100 ? 'is no longer ranked' : `is no longer ranked within the ${o.depth} looked at` }
      : null,
});

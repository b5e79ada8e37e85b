import { on, rankRule } from './rule.js';

export const urlChanged = rankRule({
  name: 'url_changed',
  option: on('The ranking URL of a tracked domain changed since its previous check (cannibalisation).'),
  check: (o) =>
    o.rank !== null && o.previousRank !== null && o.url !== null && o.previousUrl !== null && !sameUrl(o.url, o.previousUrl)
      ? { threshold: 'true', what: 'ranks with another URL', values: { before: o.previousUrl, after: o.url } }
      : null,
});

/** URLs compared without a trailing slash, a leading `www.` or the host's case: those are not a new page. */
function sameUrl(a: string, b: string): boolean {
  const norm = (u: string) =>
    u
      .trim()
      .replace(/^(https?:\/\/)(www\.)?([^/?#]*)/i, (_m, scheme: string, _w, host: string) => `${scheme.toLowerCase()}${host.toLowerCase()}`)
      .replace(/\/+$/, '');
  return norm(a) === norm(b);
}

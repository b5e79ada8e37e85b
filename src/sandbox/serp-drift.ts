import { createRng, type Rng } from './prng.js';
import type { SerpQuery } from './serp-query.js';
import { serpText } from './serp-text.js';
import type { SerpItem, SerpItemBody } from './serp-types.js';

/**
 * Item types real SERPs hold that the published shapes (result-shapes.md) do not list: the
 * emulator serves one now and then, so a pipeline meets a new SERP feature in tests first.
 */
export const UNSEEN_ITEM_TYPES = ['local_services', 'discussions_and_forums', 'short_videos', 'perspectives'] as const;

/** Date forms real bodies mix in item dates, besides `yyyy-mm-dd hh:mm:ss +00:00`. */
const DATE_FORMS: ReadonlyArray<(iso: string) => string> = [
  (iso) => `${iso.slice(0, 10)} ${iso.slice(11, 19).replaceAll(':', '-')} +00:00`,
  (iso) => `${iso.slice(0, 19)}Z`,
  (iso) => iso.slice(0, 10),
];

/** The drifts of one SERP: which forms it has that the emulator does not usually serve. */
export interface SerpDrift {
  /** An item of a type of `UNSEEN_ITEM_TYPES`, with a domain and ranks (so the marts place it). */
  unseenType: (typeof UNSEEN_ITEM_TYPES)[number] | null;
  /** Ranks of non-organic items and organic ratings written as strings (`"3"`, `"4.5"`). */
  stringNumbers: boolean;
  /** Item `timestamp`s in other date forms (dashed time, ISO `T…Z`, date only). */
  dateForms: boolean;
}

/**
 * Decides the drift of a SERP: each of the three forms with chance `rate`,
 * deterministic for (seed, keyword, market, device, day). With a small rate most SERPs
 * have none, so the usual shape stays the usual one; across a few hundred SERPs every
 * drift turns up.
 */
export function serpDrift(seed: number, q: SerpQuery, rate: number): SerpDrift {
  const rng = createRng(seed, 'drift', q.keyword.toLowerCase(), q.locationKey, q.languageCode, q.engine, q.device, q.day);
  const unseen = rng.chance(rate);
  const type = rng.pick(UNSEEN_ITEM_TYPES);
  return { unseenType: unseen ? type : null, stringNumbers: rng.chance(rate), dateForms: rng.chance(rate) };
}

/** The unseen item placed before numbering: a few fields of the kinds every item type has. */
export function unseenItem(type: string, keyword: string, rng: Rng): SerpItemBody {
  const host = `www.${rng.pick(['local-pros', 'forum-hub', 'clipshare', 'voices'])}.example`;
  return {
    type,
    domain: host,
    title: `${serpText.titleCase(keyword)} — ${type.replaceAll('_', ' ')}`,
    url: `https://${host}/${serpText.slug(keyword)}`,
    items: [{ type: `${type}_element`, title: serpText.titleCase(keyword), url: `https://${host}/` }],
  };
}

/** Rewrites numbered items in the drift's forms (ranks of organic items stay numbers). */
export function applyDrift(items: SerpItem[], drift: SerpDrift, rng: Rng): SerpItem[] {
  if (!drift.stringNumbers && !drift.dateForms) return items;
  return items.map((item) => {
    const out: SerpItem = { ...item };
    if (drift.stringNumbers) {
      if (item.type !== 'organic') Object.assign(out, { rank_group: String(item.rank_group), rank_absolute: String(item.rank_absolute) });
      const r = item.rating as { value?: unknown; votes_count?: unknown } | null | undefined;
      if (r && typeof r === 'object') out.rating = { ...r, value: String(r.value), votes_count: String(r.votes_count) };
    }
    if (drift.dateForms) {
      if (typeof item.timestamp === 'string') out.timestamp = redate(item.timestamp, rng);
      if (Array.isArray(item.items)) {
        out.items = item.items.map((x) =>
          x && typeof x === 'object' && typeof (x as { timestamp?: unknown }).timestamp === 'string'
            ? { ...x, timestamp: redate((x as { timestamp: string }).timestamp, rng) }
            : x,
        );
      }
    }
    return out;
  });
}

/** `yyyy-mm-dd hh:mm:ss +00:00` in one of the other forms. */
function redate(stamp: string, rng: Rng): string {
  return rng.pick(DATE_FORMS)(`${stamp.slice(0, 10)}T${stamp.slice(11, 19)}`);
}

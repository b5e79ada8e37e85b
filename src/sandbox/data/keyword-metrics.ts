import { keywordTopics, type Topic } from '../keyword-topics.js';
import { createRng } from '../prng.js';

/** One month of `monthly_searches`. */
export interface MonthlySearch {
  year: number;
  month: number;
  search_volume: number;
}

/** The keyword-data metrics every keyword family shares. */
export interface KeywordMetrics {
  search_volume: number;
  competition: 'LOW' | 'MEDIUM' | 'HIGH';
  competition_index: number;
  cpc: number;
  low_top_of_page_bid: number;
  high_top_of_page_bid: number;
  monthly_searches: MonthlySearch[];
}

/** Month (1-12) of each topic's peak and how strong its season is. */
const SEASONS: Partial<Record<Topic, { peak: number; amp: number }>> = {
  shopping: { peak: 11, amp: 0.45 },
  travel: { peak: 7, amp: 0.4 },
  sports: { peak: 4, amp: 0.3 },
  outdoors: { peak: 6, amp: 0.45 },
  finance: { peak: 1, amp: 0.25 },
  food: { peak: 11, amp: 0.2 },
  home: { peak: 5, amp: 0.3 },
  health: { peak: 1, amp: 0.3 },
  career: { peak: 1, amp: 0.2 },
};

const round = (n: number) => (n < 100 ? Math.round(n / 10) * 10 : n < 1000 ? Math.round(n / 10) * 10 : Math.round(n / 100) * 100);

/**
 * Search volume and ads metrics of a keyword in a location, deterministic for the seed:
 * a base volume (log-uniform, shorter keywords bigger), a seasonal curve by topic over
 * the 12 months before `at`'s month (the current month never included), and
 * competition/CPC that grow with commercial topics.
 */
export function keywordMetrics(seed: number, keyword: string, locationCode: number | null, at: Date): KeywordMetrics {
  const kw = keyword.toLowerCase();
  const rng = createRng(seed, 'kw-metrics', kw, locationCode ?? 0);
  const words = kw.split(/\s+/).filter(Boolean).length;
  const base = Math.exp(Math.log(30) + rng.next() * (Math.log(200_000) - Math.log(30))) / Math.max(1, words - 1);
  const topics = keywordTopics(kw);
  const season = [...topics].map((t) => SEASONS[t]).find(Boolean) ?? { peak: 1 + rng.int(0, 11), amp: 0.1 };
  const monthly: MonthlySearch[] = [];
  for (let back = 12; back >= 1; back--) {
    const d = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() - back, 1));
    const month = d.getUTCMonth() + 1;
    const factor = 1 + season.amp * Math.cos((2 * Math.PI * (month - season.peak)) / 12);
    const noise = 0.92 + 0.16 * createRng(seed, 'kw-month', kw, locationCode ?? 0, d.getUTCFullYear(), month).next();
    monthly.push({ year: d.getUTCFullYear(), month, search_volume: round(base * factor * noise) });
  }
  monthly.reverse(); // newest first, as the service lists them
  const volume = round(monthly.reduce((s, m) => s + m.search_volume, 0) / monthly.length);
  const commercial = topics.has('shopping') || topics.has('finance') || topics.has('travel');
  const competitionIndex = Math.min(100, Math.round((commercial ? 45 : 5) + rng.next() * 55));
  const cpc = Number(((commercial ? 1.2 : 0.2) + rng.next() * (commercial ? 6 : 1.5)).toFixed(2));
  return {
    search_volume: volume,
    competition: competitionIndex < 34 ? 'LOW' : competitionIndex < 67 ? 'MEDIUM' : 'HIGH',
    competition_index: competitionIndex,
    cpc,
    low_top_of_page_bid: Number((cpc * 0.45).toFixed(2)),
    high_top_of_page_bid: Number((cpc * 1.6).toFixed(2)),
    monthly_searches: monthly,
  };
}

/** Keywords the emulator refuses as prohibited (search volume 40501 for the whole task). */
export const PROHIBITED_WORDS = ['porn', 'xxx', 'cocaine', 'escort'] as const;

/** The first prohibited keyword of a list, if any. */
export function prohibitedKeyword(keywords: readonly string[]): string | undefined {
  return keywords.find((k) =>
    k
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .some((w) => (PROHIBITED_WORDS as readonly string[]).includes(w)),
  );
}

const MODIFIERS = [
  'best',
  'cheap',
  'near me',
  'for beginners',
  'review',
  'vs',
  'how to choose',
  'price',
  'online',
  'for women',
  'for men',
  '2026',
  'deals',
  'guide',
];

/** Keywords related to a seed: the seed with common modifiers, stable for the seed. */
export function relatedKeywords(seed: number, keyword: string, count: number): string[] {
  const rng = createRng(seed, 'related', keyword.toLowerCase());
  const pool = [...MODIFIERS];
  const out: string[] = [];
  while (out.length < count && pool.length > 0) {
    const m = pool.splice(rng.int(0, pool.length - 1), 1)[0]!;
    out.push(['best', 'cheap', 'how to choose'].includes(m) ? `${m} ${keyword}` : `${keyword} ${m}`);
  }
  return out;
}

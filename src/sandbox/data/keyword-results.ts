import { createRng } from '../prng.js';
import { keywordMetrics, relatedKeywords } from './keyword-metrics.js';
import { keywordsOf, languageOf, locationOf, serviceDate, targetOf, type ResultInput } from './result-input.js';

function volumeRecord(input: ResultInput, keyword: string) {
  const location = locationOf(input.params);
  const m = keywordMetrics(input.seed, keyword, location, input.at);
  return { keyword, spell: null, location_code: location, language_code: languageOf(input.params), search_partners: false, ...m };
}

/** `search_volume`: one object per keyword (lower-cased), no `items`. */
export function searchVolumeResults(input: ResultInput): unknown[] {
  return keywordsOf(input.params).map((k) => volumeRecord(input, k));
}

/** `keywords_for_keywords`: the seeds and related keywords, each with search-volume fields. */
export function keywordsForKeywordsResults(input: ResultInput): unknown[] {
  const seeds = keywordsOf(input.params);
  const all = [...new Set([...seeds, ...seeds.flatMap((k) => relatedKeywords(input.seed, k, 8))])];
  return all.map((k) => volumeRecord(input, k));
}

/** `keywords_for_site`: keywords built from the target's name. */
export function keywordsForSiteResults(input: ResultInput): unknown[] {
  const brand =
    targetOf(input.params)
      .replace(/^www\./, '')
      .split('.')[0] ?? 'site';
  return [brand, ...relatedKeywords(input.seed, brand, 12)].map((k) => volumeRecord(input, k));
}

/** `ad_traffic_by_keywords`: forecast impressions, clicks and cost per keyword. */
export function adTrafficResults(input: ResultInput): unknown[] {
  const bid = typeof input.params.bid === 'number' ? input.params.bid : 999;
  return keywordsOf(input.params).map((keyword) => {
    const m = keywordMetrics(input.seed, keyword, locationOf(input.params), input.at);
    const r = createRng(input.seed, 'ad-traffic', keyword);
    const impressions = Math.round(m.search_volume * (0.6 + 0.4 * r.next()));
    const ctr = Number((0.01 + 0.07 * r.next()).toFixed(4));
    const clicks = Math.round(impressions * ctr);
    const cpc = Math.min(bid, m.cpc);
    return {
      keyword,
      location_code: locationOf(input.params),
      language_code: languageOf(input.params),
      date_interval: 'next_month',
      bid,
      match: input.params.match ?? 'exact',
      impressions,
      ctr,
      average_cpc: cpc,
      cost: Number((clicks * cpc).toFixed(2)),
      clicks,
    };
  });
}

/** Trends: interest over time (weekly, 0-100 relative), by subregion and by demography. */
export function trendsResults(input: ResultInput): unknown[] {
  const keywords = keywordsOf(input.params);
  const fn = input.endpoint.path.split('/')[4] ?? 'explore';
  const graph = () => trendsGraph(input, keywords);
  const map = () => trendsMap(input.seed, keywords);
  const demography = () => trendsDemography(input.seed, keywords);
  const items =
    fn === 'subregion_interests'
      ? [map()]
      : fn === 'demography'
        ? [demography()]
        : fn === 'merged_data'
          ? [graph(), map(), demography()]
          : [graph()];
  return [
    {
      keywords,
      type: 'trends',
      location_code: locationOf(input.params),
      language_code: languageOf(input.params),
      check_url: null,
      datetime: serviceDate(input.at),
      items_count: items.length,
      items,
    },
  ];
}

/** The `trends_graph` item: weekly interest from the keywords' monthly volumes, 100 the highest month of any. */
function trendsGraph(input: ResultInput, keywords: string[]) {
  const to = typeof input.params.date_to === 'string' ? Date.parse(`${input.params.date_to}T00:00:00Z`) : input.at.getTime();
  const from = typeof input.params.date_from === 'string' ? Date.parse(`${input.params.date_from}T00:00:00Z`) : to - 365 * 86_400_000;
  const vol = keywords.map((k) => keywordMetrics(input.seed, k, locationOf(input.params), input.at));
  const max = Math.max(1, ...vol.map((v) => Math.max(...v.monthly_searches.map((m) => m.search_volume))));
  const data: Array<{ date_from: string; date_to: string; timestamp: number; missing_data: boolean; values: number[] }> = [];
  for (let t = from; t <= to; t += 7 * 86_400_000) {
    const month = new Date(t).getUTCMonth() + 1;
    const values = vol.map((v) =>
      Math.round((100 * (v.monthly_searches.find((m) => m.month === month)?.search_volume ?? v.search_volume)) / max),
    );
    data.push({
      date_from: new Date(t).toISOString().slice(0, 10),
      date_to: new Date(t + 6 * 86_400_000).toISOString().slice(0, 10),
      timestamp: Math.floor(t / 1000),
      missing_data: false,
      values,
    });
  }
  const averages = keywords.map((_, i) => Math.round(data.reduce((s, d) => s + (d.values[i] ?? 0), 0) / Math.max(1, data.length)));
  return { position: 1, type: 'trends_graph', title: 'Interest over time', keywords, data, averages };
}

/** The `trends_map` item: interest in four subregions per keyword. */
function trendsMap(seed: number, keywords: string[]) {
  return {
    position: 2,
    type: 'trends_map',
    title: 'Interest by subregion',
    keywords,
    interests: keywords.map((k) => ({
      keyword: k,
      values: ['North', 'South', 'East', 'West'].map((geo_name, i) => ({
        geo_id: `R${i + 1}`,
        geo_name,
        value: createRng(seed, 'trends-geo', k, i).int(20, 100),
      })),
    })),
  };
}

/** The `demography` item: interest by age band and by gender per keyword. */
function trendsDemography(seed: number, keywords: string[]) {
  return {
    position: 3,
    type: 'demography',
    title: 'Interest by age and gender',
    keywords,
    demography: {
      age: keywords.map((k) => ({
        keyword: k,
        values: ['18-24', '25-34', '35-44', '45-54', '55-64', '65+'].map((type, i) => ({
          type,
          value: createRng(seed, 'trends-age', k, i).int(5, 100),
        })),
      })),
      gender: keywords.map((k) => {
        const female = createRng(seed, 'trends-gender', k).int(20, 80);
        return {
          keyword: k,
          values: [
            { type: 'female', value: female },
            { type: 'male', value: 100 - female },
          ],
        };
      }),
    },
  };
}

/** AI keyword search volume: per keyword (lower-cased), with 12 months of AI search volume. */
export function aiKeywordVolumeResults(input: ResultInput): unknown[] {
  const items = keywordsOf(input.params).map((keyword) => {
    const m = keywordMetrics(input.seed, keyword, locationOf(input.params), input.at);
    const share = 0.02 + 0.1 * createRng(input.seed, 'ai-share', keyword).next();
    return {
      keyword,
      ai_search_volume: Math.round(m.search_volume * share),
      ai_monthly_searches: m.monthly_searches.map((x) => ({
        year: x.year,
        month: x.month,
        ai_search_volume: Math.round(x.search_volume * share),
      })),
    };
  });
  return [{ location_code: locationOf(input.params), language_code: languageOf(input.params), items_count: items.length, items }];
}

import {
  HIGH_PRIORITY_FACTOR,
  KIND_BASE_UNITS,
  LIVE_FACTOR_TENTHS,
  OTHER_KIND_UNITS,
  type Endpoint,
  type ResultKind,
} from '../spec/index.js';
import { STATUS, type Status } from '../envelope.js';
import { READINGS } from '../readings.js';
import type { SerpParams } from '../serp-query.js';
import { buildSerpResult } from '../serp-result.js';
import { LIGHTHOUSE_VERSIONS } from '../utilities/reference-data.js';
import { prohibitedKeyword } from './keyword-metrics.js';
import {
  adTrafficResults,
  aiKeywordVolumeResults,
  keywordsForKeywordsResults,
  keywordsForSiteResults,
  searchVolumeResults,
  trendsResults,
} from './keyword-results.js';
import { labsGenericResults, rankedKeywordsResults, relatedKeywordsResults } from './labs-results.js';
import { checkLlmTask, llmResponseResults } from './llm-results.js';
import {
  appDataResults,
  backlinksResults,
  businessDataResults,
  contentAnalysisResults,
  domainAnalyticsResults,
  lighthouseResults,
  merchantResults,
  reviewsResults,
} from './other-results.js';
import { keywordsOf, type ResultInput } from './result-input.js';

type Builder = (input: ResultInput) => unknown[];

const BUILDERS: Partial<Record<ResultKind, Builder>> = {
  serp: (i) => {
    const [, , , engine = 'engA', type = 'organic'] = i.endpoint.path.split('/');
    return [
      {
        ...buildSerpResult({
          seed: i.seed,
          engine,
          params: i.params as SerpParams,
          at: i.at,
          drift: i.drift ?? 0,
          ...(i.rankProfiles ? { rankProfiles: i.rankProfiles } : {}),
        }),
        type: type === 'v2' ? 'organic' : type,
      },
    ];
  },
  search_volume: searchVolumeResults,
  keywords_for_keywords: keywordsForKeywordsResults,
  keywords_for_site: keywordsForSiteResults,
  ad_traffic: adTrafficResults,
  trends: trendsResults,
  labs_ranked_keywords: rankedKeywordsResults,
  labs_related_keywords: relatedKeywordsResults,
  labs: labsGenericResults,
  domain_analytics: domainAnalyticsResults,
  backlinks: backlinksResults,
  content_analysis: contentAnalysisResults,
  merchant: merchantResults,
  app_data: appDataResults,
  business_data: businessDataResults,
  reviews: reviewsResults,
  ai_keyword_volume: aiKeywordVolumeResults,
  llm_response: llmResponseResults,
  lighthouse: (i) => lighthouseResults(i, LIGHTHOUSE_VERSIONS[0]),
};

/** The result array of a task of this endpoint, deterministic for (seed, params, day). */
export function buildResults(input: ResultInput): unknown[] {
  const build = BUILDERS[input.endpoint.resultKind ?? 'generic'];
  return build ? build(input) : [{ items_count: 0, items: [] }];
}

/**
 * Rules a task can break that its schema cannot see: a prohibited keyword fails a whole
 * search-volume task (40501), an LLM model not on the list or used against its kind.
 */
export function checkTaskRules(endpoint: Endpoint, params: Record<string, unknown>): { status: Status; message: string } | undefined {
  const kind = endpoint.resultKind;
  if (kind === 'search_volume' || kind === 'keywords_for_keywords' || kind === 'ad_traffic') {
    const bad = prohibitedKeyword(keywordsOf(params));
    if (bad) return { status: STATUS.invalidField, message: `Invalid Field: keyword '${bad}' is prohibited; the whole task was refused.` };
  }
  if (kind === 'llm_response') {
    const problem = checkLlmTask(params);
    if (problem) return { status: STATUS.invalidField, message: `Invalid Field: ${problem}.` };
  }
  // READINGS.imageFormats: images are served in the formats of their mapping row only.
  const formats = READINGS.imageFormats.value;
  if (endpoint.path.startsWith(IMAGES_BASE) && typeof params.postback_data === 'string' && !formats.includes(params.postback_data)) {
    return {
      status: STATUS.invalidField,
      message: `Invalid Field: 'postback_data' must be ${formats.join(' or ')} for images (its results are served as ${formats.join(', ')} only).`,
    };
  }
  return undefined;
}

const IMAGES_BASE = '/v3/serp/engA/images/';

/** Price of one non-SERP task (spec/prices.ts): the kind's base, double at priority 2, 3.3x live (integral units). */
export function dataTaskPriceUnits(endpoint: Endpoint, task: Record<string, unknown>, mode: 'standard' | 'live'): number {
  if (!endpoint.charged) return 0;
  let units = KIND_BASE_UNITS[endpoint.resultKind ?? 'generic'] ?? OTHER_KIND_UNITS;
  if (task.priority === 2) units *= HIGH_PRIORITY_FACTOR;
  if (mode === 'live') units = Math.floor((units * LIVE_FACTOR_TENTHS + 5) / 10);
  return units;
}

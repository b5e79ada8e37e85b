import type { Endpoint, ResultKind } from '../../catalog/index.js';
import { STATUS, type Status } from '../envelope.js';
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
        ...buildSerpResult({ seed: i.seed, engine, params: i.params as SerpParams, at: i.at, drift: i.drift ?? 0 }),
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
  return undefined;
}

/** Standard-mode price of one task per result kind, CNY units (the emulator's list; SERP in pricing.ts). */
const BASE_UNITS: Partial<Record<ResultKind, number>> = {
  search_volume: 360,
  keywords_for_keywords: 360,
  keywords_for_site: 360,
  ad_traffic: 360,
  trends: 72,
  labs_ranked_keywords: 720,
  labs_related_keywords: 720,
  labs: 720,
  domain_analytics: 720,
  backlinks: 1440,
  content_analysis: 1440,
  merchant: 72,
  app_data: 72,
  business_data: 72,
  reviews: 54,
  ai_keyword_volume: 720,
  llm_response: 144,
  on_page_task: 90,
  on_page_pages: 10,
  on_page_links: 10,
  lighthouse: 30,
};

/** Price of one non-SERP task: the kind's base, double at priority 2, 3.3x live (integral units). */
export function dataTaskPriceUnits(endpoint: Endpoint, task: Record<string, unknown>, mode: 'standard' | 'live'): number {
  if (!endpoint.charged) return 0;
  let units = BASE_UNITS[endpoint.resultKind ?? 'generic'] ?? 72;
  if (task.priority === 2) units *= 2;
  if (mode === 'live') units = Math.floor((units * 33 + 5) / 10);
  return units;
}

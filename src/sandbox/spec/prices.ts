/**
 * Prices, in CNY units of 0.0001 (../money.ts) unless said. The spec's Billing section gives
 * the /v1 prices, the events price and the free calls; for everything else it gives only the
 * shape ("Live mode costs more than standard mode", "Priority 2 costs extra", "A `depth` above
 * 10 can add charges per additional block of 10 results") and the numbers are the emulator's
 * (READINGS.unshownPrices, READINGS.extraDepthPrice).
 */
import { READINGS } from '../readings.js';
import type { ResultKind } from './endpoint.js';

// ---------------------------------------------------------------------------------------
// /v3
// ---------------------------------------------------------------------------------------

/** SERP task, standard mode, normal priority, first 10 results: 0.0043 CNY (emulator's number). */
export const SERP_BASE_UNITS = 43;

/** Each further started block of 10 results (Billing: "can add charges per additional block of 10"): READINGS.extraDepthPrice of the base. */
export const SERP_EXTRA_BLOCK_UNITS = Math.round(SERP_BASE_UNITS * READINGS.extraDepthPrice.value);

/** Billing: "Events `task_post` is charged when the task is created (reference about 0.0240 CNY per task)." */
export const EVENTS_TASK_UNITS = 240;

/** Billing: "Live mode costs more than standard mode": 3.3 times (kept as 33/10, emulator's number). */
export const LIVE_FACTOR_TENTHS = 33;

/** Billing: "Priority 2 costs extra"; events table: "2 = high (extra charge)": double (emulator's number). */
export const HIGH_PRIORITY_FACTOR = 2;

/** Further started blocks of 10 results past the first 10 for a `depth` (default 10, events table). */
export function extraBlocks(depth: number | undefined): number {
  return Math.max(0, Math.ceil(((depth ?? 10) - 10) / 10));
}

/**
 * Standard-mode price of one task of the families whose prices the spec does not show
 * (emulator's list). `on_page_resources` is free by the spec ("listed as free (reference
 * price 0.0000)"); utilities are free by the Billing list and carry `charged: false`.
 */
export const KIND_BASE_UNITS: Partial<Record<ResultKind, number>> = {
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

/** A charged kind missing from the list above. */
export const OTHER_KIND_UNITS = 72;

// ---------------------------------------------------------------------------------------
// /v1 (Billing)
// ---------------------------------------------------------------------------------------

/** "Chat reference prices (per 1M tokens ...)": CNY per 1M input / output tokens. */
export const CHAT_CNY_PER_M: Readonly<Record<string, { input: number; output: number }>> = {
  'chat5.6-terra': { input: 0.6, output: 3.6 },
  'chat5.6-luna': { input: 0.06, output: 0.36 },
};

/** "Embeddings reference prices (per 1K tokens)": CNY. */
export const EMBEDDING_CNY_PER_K: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 0.00032,
  'text-embedding-3-large': 0.00208,
  'text-embedding-ada-002': 0.0016,
};

export type ImageTier = '0.5K' | '1K' | '2K' | '4K';

/** The image tier table: "Price per image, USD equivalent". */
export const IMAGE_TIER_USD: Readonly<Record<ImageTier, number>> = { '0.5K': 0.018, '1K': 0.0268, '2K': 0.0404, '4K': 0.0604 };

/** "converted at an image-specific rate (8 at the time of writing; independent of the rate used by `/v3`)". */
export const IMAGE_CNY_PER_USD = 8;

/** "Text input and text/thinking output of the image model are also charged at 40% of the upstream token price." */
export const IMAGE_TEXT_SHARE = 0.4;

/** The upstream token price of the image model: not given; the emulator's USD per 1M tokens. */
export const IMAGE_TEXT_USD_PER_M = { input: 0.3, output: 2.5 } as const;

const IMAGE_SIZE = /^([1-9]\d{0,4})x([1-9]\d{0,4})$/;

/** "`size` | `<width>x<height>`; ... maximum 4K; mapped by longest edge to billing tier" (edges: READINGS.imageEdges). */
export function imageTier(size: string): { width: number; height: number; tier: ImageTier } | undefined {
  const m = IMAGE_SIZE.exec(size);
  if (!m) return undefined;
  const width = Number(m[1]);
  const height = Number(m[2]);
  const edge = Math.max(width, height);
  const edges = READINGS.imageEdges.value;
  const tier = (['0.5K', '1K', '2K', '4K'] as const).find((t) => edge <= edges[t]);
  return tier && { width, height, tier };
}

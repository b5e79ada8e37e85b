import {
  CHAT_CNY_PER_M,
  EMBEDDING_CNY_PER_K,
  IMAGE_CNY_PER_USD,
  IMAGE_TEXT_SHARE,
  IMAGE_TEXT_USD_PER_M,
  IMAGE_TIER_USD,
} from '../spec/index.js';

/**
 * `/v1` prices in CNY units of 0.0001 (money.ts), from the spec's Billing section. Token
 * charges are rounded up to the next unit, so a non-empty call never costs 0.
 */

/** The spec's prices (spec/prices.ts). */
export const CHAT_PRICES = CHAT_CNY_PER_M;
export { IMAGE_CNY_PER_USD, IMAGE_TEXT_USD_PER_M, IMAGE_TIER_USD };
/** The most text/thinking tokens the image model is assumed to write, for the 402 estimate. */
export const IMAGE_MAX_OUTPUT_TOKENS = 1000;

const UNITS_PER_CNY = 10_000;

/** CNY units for an amount of CNY, rounded up. */
export function cnyToUnitsCeil(cny: number): number {
  return Math.ceil(cny * UNITS_PER_CNY - 1e-9);
}

/** Chat charge in CNY units, input and output priced separately. */
export function chatUnits(model: string, promptTokens: number, completionTokens: number): number {
  const p = CHAT_PRICES[model];
  if (!p) throw new Error(`no price for chat model ${model}`);
  return cnyToUnitsCeil((promptTokens * p.input + completionTokens * p.output) / 1_000_000);
}

/** Embeddings charge in CNY units. */
export function embeddingUnits(model: string, tokens: number): number {
  return cnyToUnitsCeil(((EMBEDDING_CNY_PER_K[model] ?? 0) * tokens) / 1000);
}

/** Image charge in CNY units: the tier's price plus 40% of the text tokens, at the image rate. */
export function imageUnits(tier: keyof typeof IMAGE_TIER_USD, promptTokens: number, outputTokens: number): number {
  const textUsd = IMAGE_TEXT_SHARE * ((promptTokens * IMAGE_TEXT_USD_PER_M.input + outputTokens * IMAGE_TEXT_USD_PER_M.output) / 1_000_000);
  return cnyToUnitsCeil((IMAGE_TIER_USD[tier] + textUsd) * IMAGE_CNY_PER_USD);
}

/** Tokens of a text, as the emulator counts them: about four characters a token, at least 1. */
export function countTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

import { keywordTopics } from '../keyword-topics.js';
import { hashParts } from '../prng.js';

/** How many dimensions each feature touches (a sparse random projection). */
const SLOTS = 8;

/**
 * A deterministic embedding: the text's words, character trigrams and topics (from the
 * SERP lexicon) are hashed into `dims` dimensions with ±1 signs and weights, then the
 * vector is normalized. Texts that share words or a topic point the same way, so
 * "trail running shoes" and "running shoes for women" are close while "mortgage rates"
 * is far: clustering downstream finds real groups.
 */
export function embeddingVector(text: string, dims: number, model: string): Float32Array {
  const v = new Float64Array(dims);
  const lower = text.toLowerCase();
  const words = lower.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  const add = (feature: string, weight: number) => {
    for (let s = 0; s < SLOTS; s++) {
      const h = hashParts(model, feature, s);
      v[h % dims]! += (h & 0x80000000 ? -1 : 1) * weight;
    }
  };
  for (const w of words) {
    add(`w:${w.replace(/s$/, '')}`, 1);
    const padded = ` ${w} `;
    for (let i = 0; i + 3 <= padded.length; i++) add(`t:${padded.slice(i, i + 3)}`, 0.35);
  }
  for (const topic of keywordTopics(lower)) if (topic !== 'general') add(`topic:${topic}`, 2);
  if (words.length === 0) add(`empty:${text}`, 1);
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  const out = new Float32Array(dims);
  for (let i = 0; i < dims; i++) out[i] = v[i]! / norm;
  return out;
}

/** Little-endian float32 bytes in base64, the `encoding_format: base64` form. */
export function vectorToBase64(v: Float32Array): string {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
}

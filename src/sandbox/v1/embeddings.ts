import { READINGS } from '../readings.js';
import type { HandlerReply } from '../handlers/context.js';
import { embeddingVector, vectorToBase64 } from './embedding-vector.js';
import { countTokens, embeddingUnits } from './v1-pricing.js';
import { chargeAndAnswer, parseV1Body, type V1Context } from './v1-context.js';

interface EmbeddingsBody {
  model: string;
  input: string | string[];
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
}

/**
 * `POST /v1/embeddings`: one vector per input (a string or an array), of the model's
 * size or `dimensions` (3-* models only; spec/limits.ts refuses it for ada-002),
 * as floats or base64 float32. Vectors of related texts are close (embedding-vector.ts).
 */
export function handleEmbeddings(ctx: V1Context): HandlerReply {
  const parsed = parseV1Body<EmbeddingsBody>(ctx);
  if (!parsed.ok) return parsed.reply;
  const body = parsed.body;
  const inputs = typeof body.input === 'string' ? [body.input] : body.input;
  const dims = body.dimensions ?? READINGS.embeddingDimensions.value[body.model] ?? 1536;
  const tokens = inputs.reduce((n, t) => n + countTokens(t), 0);
  const data = inputs.map((text, index) => {
    const v = embeddingVector(text, dims, body.model);
    return { object: 'embedding', index, embedding: body.encoding_format === 'base64' ? vectorToBase64(v) : Array.from(v) };
  });
  return chargeAndAnswer(ctx, embeddingUnits(body.model, tokens), {
    object: 'list',
    data,
    model: body.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

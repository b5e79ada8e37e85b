import { CHAT_MODEL_ALIASES, endpoint, IMAGE_MODEL, imageTier, type ImageTier } from '../catalog/index.js';
import { EtlError } from '../errors.js';
import type { ChargeRecord } from './charge.js';
import type { ServiceClient, V1CallOptions, V1Result } from './client.js';

/** Structural view of the client the helpers need (avoids a runtime import cycle). */
type V1Caller = Pick<ServiceClient, 'callV1' | 'warn' | 'keyKind'>;

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content: string | unknown[];
  [k: string]: unknown;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  [k: string]: unknown;
}

/** The standard chat-completion body, typed as far as the tool reads it. */
export interface ChatCompletion {
  id?: string;
  object?: string;
  model?: string;
  choices: Array<{ index: number; message: { role: string; content: string | null }; finish_reason?: string | null }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

/**
 * Text chat completion. A legacy alias (`chat5.4`, `chat5.4-mini`) is replaced by the model
 * it maps to, with a deprecation warning, so old workflows keep running on the current ids.
 */
export async function chat(client: V1Caller, req: ChatRequest, o: V1CallOptions = {}): Promise<V1Result<ChatCompletion>> {
  if (req.stream === true) {
    throw new EtlError('ETL_REQUEST_INVALID', 'chat() reads one JSON answer; stream: true is not supported here (nothing was sent).', {
      context: { stage: 'client', path: '/v1/chat/completions' },
    });
  }
  const canonical = CHAT_MODEL_ALIASES[req.model];
  if (canonical)
    client.warn(
      `model ${req.model} is a legacy alias kept only for old workflows; sending ${canonical} instead. Use ${canonical} in new code.`,
    );
  return client.callV1<ChatCompletion>(endpoint('v1.chat.completions'), canonical ? { ...req, model: canonical } : req, o);
}

export interface EmbeddingsRequest {
  model: string;
  input: string | string[];
  dimensions?: number;
  /** Wire format; the helper asks for base64 unless told otherwise (4 bytes a value, not ~10 characters). */
  encoding_format?: 'float' | 'base64';
  user?: string;
}

export interface Embeddings {
  model: string;
  /** One vector per input, in input order. */
  vectors: Float32Array[];
  usage: { prompt_tokens: number; total_tokens: number } | undefined;
  charge: ChargeRecord;
}

/** Decodes a base64 embedding: little-endian float32 values, as the widely used wire format sends them. */
export function decodeBase64Embedding(b64: string): Float32Array {
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.length % 4 !== 0) throw new Error(`a base64 embedding of ${bytes.length} bytes is not a float32 array`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

interface EmbeddingsBody {
  model: string;
  data: Array<{ index: number; embedding: number[] | string }>;
  usage?: { prompt_tokens: number; total_tokens: number };
}

/**
 * Embeddings for one text or a batch, as float32 vectors in input order, whichever wire
 * format was used; a vector of the wrong length or a missing index is an error, not a
 * silently shorter array.
 */
export async function embed(client: V1Caller, req: EmbeddingsRequest, o: V1CallOptions = {}): Promise<Embeddings> {
  const body = { ...req, encoding_format: req.encoding_format ?? 'base64' };
  const res = await client.callV1<EmbeddingsBody>(endpoint('v1.embeddings'), body, o);
  const inputs = typeof req.input === 'string' ? 1 : req.input.length;
  const data = Array.isArray(res.body?.data) ? res.body.data : [];
  const vectors: Float32Array[] = new Array(inputs);
  for (const d of data) {
    const v = typeof d.embedding === 'string' ? decodeBase64Embedding(d.embedding) : Float32Array.from(d.embedding);
    if (req.dimensions !== undefined && v.length !== req.dimensions)
      throw bad(`embedding ${d.index} has ${v.length} values, ${req.dimensions} were asked for`, res);
    if (!(d.index >= 0 && d.index < inputs)) throw bad(`embedding index ${d.index} is outside the ${inputs} inputs`, res);
    vectors[d.index] = v;
  }
  const missing = [...vectors.keys()].filter((i) => !vectors[i]);
  if (missing.length) throw bad(`no embedding for input ${missing.join(', ')}`, res);
  return { model: res.body.model, vectors, usage: res.body.usage, charge: res.charge };
}

export interface ImageRequest {
  prompt: string;
  /** `<width>x<height>`, longest edge at most 4096; default `1024x1024`. */
  size?: string;
}

export interface GeneratedImage {
  jpeg: Buffer;
  dataUrl: string;
  width: number;
  height: number;
  /** Billing tier by longest edge, known before the call was sent. */
  tier: ImageTier;
  /** The upstream routing id the service answers with (never sent). */
  upstreamModel: string | undefined;
  charge: ChargeRecord;
}

const DATA_URL = /data:image\/jpeg;base64,([A-Za-z0-9+/=]+)/;

/**
 * Generates one image. The size is parsed and its billing tier computed before anything is
 * sent; a sandbox key is refused here, since the service answers it with 403 anyway.
 */
export async function generateImage(client: V1Caller, req: ImageRequest): Promise<GeneratedImage> {
  const size = req.size ?? '1024x1024';
  const parsed = imageTier(size);
  if (!parsed) {
    throw new EtlError(
      'ETL_REQUEST_INVALID',
      `image size ${size} refused before sending (nothing was charged): <width>x<height> with the longest edge at most 4096 (4K).`,
      { context: { stage: 'client', path: '/v1/chat/completions' } },
    );
  }
  if (client.keyKind === 'sandbox') {
    throw new EtlError(
      'ETL_AUTH',
      'image generation takes a live key (svc_live_...); sandbox keys are refused with HTTP 403, so nothing was sent.',
      { context: { stage: 'client', path: '/v1/chat/completions' } },
    );
  }
  const res = await client.callV1<ChatCompletion>(endpoint('v1.chat.completions.image'), {
    model: IMAGE_MODEL,
    messages: [{ role: 'user', content: req.prompt }],
    stream: false,
    n: 1,
    size,
  });
  const content = res.body?.choices?.[0]?.message?.content ?? '';
  const m = typeof content === 'string' ? DATA_URL.exec(content) : null;
  if (!m) throw bad('the answer holds no JPEG data URL', res);
  return {
    jpeg: Buffer.from(m[1]!, 'base64'),
    dataUrl: `data:image/jpeg;base64,${m[1]}`,
    width: parsed.width,
    height: parsed.height,
    tier: parsed.tier,
    upstreamModel: res.body.model,
    charge: res.charge,
  };
}

function bad(what: string, res: V1Result): EtlError {
  return new EtlError(
    'ETL_SERVICE_ERROR',
    `${res.endpoint.path}: ${what}; the body was landed raw (request id ${res.charge.requestId ?? 'none'}).`,
    {
      context: { stage: 'client', path: res.endpoint.path, requestId: res.charge.requestId ?? undefined },
    },
  );
}

import { z } from 'zod';

/** Chat model ids the service accepts. */
export const CHAT_MODELS = ['chat5.6-terra', 'chat5.6-luna'] as const;

/** Legacy aliases kept only for old workflows, with the model each maps to. */
export const CHAT_MODEL_ALIASES: Readonly<Record<string, (typeof CHAT_MODELS)[number]>> = {
  'chat5.4': 'chat5.6-terra',
  'chat5.4-mini': 'chat5.6-luna',
};

/** The public name of the image model; the response names an upstream id, never sent. */
export const IMAGE_MODEL = 'imgmodel-3.1-flash-image';

/**
 * Embedding models with their native output size (the upper bound of `dimensions`) and
 * the spec's reference price in CNY per 1,000 tokens (an estimate: the charge header is
 * authoritative).
 */
export const EMBEDDING_MODELS: Readonly<Record<string, { dimensions: number; customDimensions: boolean; cnyPer1kTokens: number }>> = {
  'text-embedding-3-small': { dimensions: 1536, customDimensions: true, cnyPer1kTokens: 0.00032 },
  'text-embedding-3-large': { dimensions: 3072, customDimensions: true, cnyPer1kTokens: 0.00208 },
  'text-embedding-ada-002': { dimensions: 1536, customDimensions: false, cnyPer1kTokens: 0.0016 },
};

const message = z
  .object({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool'], 'system, developer, user, assistant or tool'),
    content: z.union([z.string(), z.array(z.unknown())], 'a string or an array of content parts'),
  })
  .passthrough();

const messages = z.array(message, 'an array of messages').min(1, 'at least one message');

/** Text chat completion: a terra/luna model (or a legacy alias) and messages; other fields pass through. */
export const chatBodySchema = z
  .object({
    model: z.enum(
      [...CHAT_MODELS, ...Object.keys(CHAT_MODEL_ALIASES)] as [string, ...string[]],
      `one of ${[...CHAT_MODELS, ...Object.keys(CHAT_MODEL_ALIASES)].join(', ')}`,
    ),
    messages,
    stream: z.boolean().optional(),
  })
  .passthrough();

/** Image size `<width>x<height>`, each edge 1..4096 (the spec's "maximum 4K"). */
export const IMAGE_SIZE = /^([1-9]\d{0,4})x([1-9]\d{0,4})$/;

export type ImageTier = '0.5K' | '1K' | '2K' | '4K';

/**
 * Parses an image size and maps its longest edge to the billing tier, so a price can be
 * shown before the call. Undefined when the size is malformed or above 4K.
 */
export function imageTier(size: string): { width: number; height: number; tier: ImageTier } | undefined {
  const m = IMAGE_SIZE.exec(size);
  if (!m) return undefined;
  const width = Number(m[1]);
  const height = Number(m[2]);
  const edge = Math.max(width, height);
  const tier: ImageTier | undefined = edge <= 512 ? '0.5K' : edge <= 1024 ? '1K' : edge <= 2048 ? '2K' : edge <= 4096 ? '4K' : undefined;
  return tier && { width, height, tier };
}

/** Image generation through chat completions: n fixed at 1, stream false, size up to 4K. */
export const imageBodySchema = z
  .object({
    model: z.literal(IMAGE_MODEL, `must be ${IMAGE_MODEL}`),
    messages,
    stream: z.literal(false, 'must be false').optional(),
    n: z.literal(1, 'fixed at 1').optional(),
    size: z
      .string()
      .refine((s) => imageTier(s) !== undefined, '<width>x<height> with the longest edge at most 4096 (4K)')
      .optional(),
  })
  .passthrough();

/** Embeddings: one of three models, one text or an array, float or base64, dimensions only for 3-*. */
export const embeddingsBodySchema = z
  .object({
    model: z.enum(Object.keys(EMBEDDING_MODELS) as [string, ...string[]], `one of ${Object.keys(EMBEDDING_MODELS).join(', ')}`),
    input: z.union(
      [z.string().min(1, 'must not be empty'), z.array(z.string().min(1, 'must not be empty')).min(1, 'at least one text')],
      'a string or an array of strings',
    ),
    encoding_format: z.enum(['float', 'base64'], 'float or base64').optional(),
    dimensions: z.number().int().min(1, 'at least 1').optional(),
    user: z.string().optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    const model = EMBEDDING_MODELS[b.model];
    if (b.dimensions === undefined || !model) return;
    if (!model.customDimensions) {
      ctx.addIssue({ code: 'custom', path: ['dimensions'], message: 'only text-embedding-3-* models take dimensions' });
    } else if (b.dimensions > model.dimensions) {
      ctx.addIssue({ code: 'custom', path: ['dimensions'], message: `at most ${model.dimensions} for ${b.model}` });
    }
  });

import { createHash } from 'node:crypto';
import { imageTier } from '../spec/index.js';
import type { HandlerReply } from '../handlers/context.js';
import { contentText } from './chat.js';
import { countTokens, IMAGE_MAX_OUTPUT_TOKENS, imageUnits } from './v1-pricing.js';
import { chargeAndAnswer, parseV1Body, v1Error, type V1Context } from './v1-context.js';

/** The routing id the answer names (the public name is what callers send). */
export const IMAGE_UPSTREAM_MODEL = 'upstream-img-3.1-flash-image-preview';

/** A valid 1x1 baseline JPEG: the emulator draws nothing, but the data URL decodes. */
const TINY_JPEG_BASE64 =
  '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=';

interface ImageBody {
  model: string;
  messages: Array<{ role: string; content: unknown }>;
  size?: string;
}

/**
 * Image generation through `POST /v1/chat/completions` with the image model: live keys
 * only (403 for a sandbox key), `n` 1, `stream` false and a size up to 4K (400
 * otherwise, by spec/limits.ts `IMAGE_BODY`), priced by the longest edge's tier plus 40% of the
 * text tokens at the image rate; 402 when the balance cannot cover the maximum estimate.
 * The answer is a JPEG data URL wrapped in a markdown image.
 */
export function handleImage(ctx: V1Context): HandlerReply {
  if (!ctx.caller.live)
    return v1Error(403, 'sandbox_key_forbidden', 'Image generation is not available with sandbox keys.', 'permission_error');
  const parsed = parseV1Body<ImageBody>(ctx);
  if (!parsed.ok) return parsed.reply;
  const body = parsed.body;
  const size = imageTier(body.size ?? '1024x1024')!;
  const prompt = body.messages.map((m) => contentText(m.content)).join('\n');
  const promptTokens = countTokens(prompt);
  const outputTokens = 16;
  const content = `![generated image](data:image/jpeg;base64,${TINY_JPEG_BASE64})`;
  const maxUnits = imageUnits(size.tier, promptTokens, IMAGE_MAX_OUTPUT_TOKENS);
  return chargeAndAnswer(
    ctx,
    imageUnits(size.tier, promptTokens, outputTokens),
    {
      id: `chatcmpl-img-${createHash('sha256')
        .update(`${ctx.world.seed}|${prompt}|${body.size ?? ''}`)
        .digest('hex')
        .slice(0, 20)}`,
      object: 'chat.completion',
      created: Math.floor(ctx.now.getTime() / 1000),
      model: IMAGE_UPSTREAM_MODEL,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: promptTokens, completion_tokens: outputTokens, total_tokens: promptTokens + outputTokens },
    },
    maxUnits,
  );
}

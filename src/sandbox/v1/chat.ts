import { createHash } from 'node:crypto';
import { CHAT_MODEL_ALIASES } from '../../catalog/index.js';
import type { HandlerReply } from '../handlers/context.js';
import { createRng } from '../prng.js';
import { chatUnits, countTokens } from './v1-pricing.js';
import { chargeAndAnswer, parseV1Body, v1Error, type V1Context } from './v1-context.js';

interface ChatBody {
  model: string;
  messages: Array<{ role: string; content: unknown }>;
  stream?: boolean;
}

const OPENERS = ['In short:', 'Summary:', 'Answer:', 'Briefly:'];
const CLOSERS = ['This is a simulated answer from the sandbox.', 'Generated deterministically by the emulator.', 'No model was called.'];

/** Text of a message's content: the string, or the text parts of an array. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join(' ');
  }
  return '';
}

/**
 * `POST /v1/chat/completions` (text): terra or luna (the legacy aliases `chat5.4` and
 * `chat5.4-mini` answer as terra and luna), a short deterministic answer built from the
 * last user message, usage counted in tokens, and the charge from the spec's per-1M
 * input and output prices in the charge header.
 */
export function handleChat(ctx: V1Context): HandlerReply {
  const parsed = parseV1Body<ChatBody>(ctx);
  if (!parsed.ok) return parsed.reply;
  const body = parsed.body;
  if (body.stream === true) return v1Error(400, 'unsupported_parameter', 'stream=true is not supported by the emulator; send stream=false.', 'invalid_request_error', 'stream');
  const model = CHAT_MODEL_ALIASES[body.model] ?? body.model;
  const prompt = body.messages.map((m) => contentText(m.content)).join('\n');
  const lastUser = [...body.messages].reverse().find((m) => m.role === 'user');
  const question = contentText(lastUser?.content ?? '').trim();
  const rng = createRng(ctx.world.seed, 'chat', model, prompt);
  const words = question.split(/\s+/).filter(Boolean).slice(0, model.endsWith('terra') ? 24 : 12);
  const answer = `${rng.pick(OPENERS)} ${words.join(' ')}${words.length ? '.' : ''} ${rng.pick(CLOSERS)}`.trim();
  const promptTokens = body.messages.reduce((n, m) => n + countTokens(contentText(m.content)) + 4, 0);
  const completionTokens = countTokens(answer);
  const id = `chatcmpl-${createHash('sha256').update(`${ctx.world.seed}|${model}|${prompt}`).digest('hex').slice(0, 24)}`;
  return chargeAndAnswer(ctx, chatUnits(model, promptTokens, completionTokens), {
    id,
    object: 'chat.completion',
    created: Math.floor(ctx.now.getTime() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: answer, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  });
}

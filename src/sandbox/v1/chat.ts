import { createHash } from 'node:crypto';
import { CHAT_ALIASES } from '../spec/index.js';
import type { HandlerReply } from '../handlers/context.js';
import { createRng } from '../prng.js';
import { chatUnits, countTokens } from './v1-pricing.js';
import { chargeAndAnswer, parseV1Body, type V1Context } from './v1-context.js';

interface ChatBody {
  model: string;
  messages: Array<{ role: string; content: unknown }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
}

const OPENERS = ['In short:', 'Summary:', 'Answer:', 'Briefly:'];
const CLOSERS = ['This is a simulated answer from the sandbox.', 'Generated deterministically by the emulator.', 'No model was called.'];

/** Text of a message's content: the string, or the text parts of an array. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : ''))
      .join(' ');
  }
  return '';
}

/**
 * `POST /v1/chat/completions` (text): terra or luna (the legacy aliases `chat5.4` and
 * `chat5.4-mini` answer as terra and luna), a short deterministic answer built from the
 * last user message, usage counted in tokens, and the charge from the spec's per-1M
 * input and output prices in the charge header. `stream: true` answers the same text as
 * standard server-sent events.
 */
export function handleChat(ctx: V1Context): HandlerReply {
  const parsed = parseV1Body<ChatBody>(ctx);
  if (!parsed.ok) return parsed.reply;
  const body = parsed.body;
  const model = CHAT_ALIASES[body.model] ?? body.model;
  const prompt = body.messages.map((m) => contentText(m.content)).join('\n');
  const lastUser = [...body.messages].reverse().find((m) => m.role === 'user');
  const question = contentText(lastUser?.content ?? '').trim();
  const rng = createRng(ctx.world.seed, 'chat', model, prompt);
  const words = question
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, model.endsWith('terra') ? 24 : 12);
  const answer = `${rng.pick(OPENERS)} ${words.join(' ')}${words.length ? '.' : ''} ${rng.pick(CLOSERS)}`.trim();
  const promptTokens = body.messages.reduce((n, m) => n + countTokens(contentText(m.content)) + 4, 0);
  const completionTokens = countTokens(answer);
  const id = `chatcmpl-${createHash('sha256').update(`${ctx.world.seed}|${model}|${prompt}`).digest('hex').slice(0, 24)}`;
  const created = Math.floor(ctx.now.getTime() / 1000);
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  const units = chatUnits(model, promptTokens, completionTokens);
  if (body.stream === true) {
    const reply = chargeAndAnswer(ctx, units, null);
    if (reply.http !== 200) return reply;
    const includeUsage = body.stream_options?.include_usage === true;
    return {
      ...reply,
      json: undefined,
      raw: {
        contentType: 'text/event-stream; charset=utf-8',
        text: chatStream({ id, created, model, answer, usage: includeUsage ? usage : undefined }),
      },
    };
  }
  return chargeAndAnswer(ctx, units, {
    id,
    object: 'chat.completion',
    created,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: answer, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage,
  });
}

/**
 * The standard streaming form of a chat completion, as server-sent events: a
 * `chat.completion.chunk` with the role, one per word of the answer, one with
 * `finish_reason`, then (with `stream_options.include_usage`) one with no choices and the
 * usage, and `data: [DONE]`. The whole answer is known up front, so the charge header is
 * the call's full charge, as for `stream: false`.
 */
function chatStream(c: { id: string; created: number; model: string; answer: string; usage: Record<string, number> | undefined }): string {
  const chunk = (choices: unknown[], usage?: unknown) =>
    `data: ${JSON.stringify({ id: c.id, object: 'chat.completion.chunk', created: c.created, model: c.model, choices, ...(c.usage ? { usage: usage ?? null } : {}) })}\n\n`;
  const choice = (delta: Record<string, unknown>, finish: string | null = null) => ({
    index: 0,
    delta,
    logprobs: null,
    finish_reason: finish,
  });
  const pieces = c.answer.split(/(?<= )/);
  return [
    chunk([choice({ role: 'assistant', content: '', refusal: null })]),
    ...pieces.map((p) => chunk([choice({ content: p })])),
    chunk([choice({}, 'stop')]),
    ...(c.usage ? [chunk([], c.usage)] : []),
    'data: [DONE]\n\n',
  ].join('');
}

import { endpoint, formatSpecDatetime } from '../catalog/index.js';
import type { ServiceClient } from '../client/index.js';

/** Failed callbacks of one task, as `{api}/errors` lists them. */
export interface CallbackFailure {
  /** How many times its callback failed in the window. */
  count: number;
  /** HTTP status our side answered the last time (0: no answer, or the service never reached us). */
  lastHttpCode: number;
}

const CALLBACK_FUNCTIONS = new Set(['pingback_url', 'postback_url']);
const PAGE = 1000;
const RESEND_MAX = 100;
const DAY = 24 * 3600 * 1000;

/**
 * Failed callbacks of the given tasks, from `{api}/errors` (free) for each api, since
 * `from` (kept inside the 7-day look-back), paged 1000 rows at a time. Rows of other
 * tasks and other functions are ignored.
 */
export async function failedCallbacks(
  client: ServiceClient,
  apis: readonly string[],
  ids: ReadonlySet<string>,
  window: { from: Date; now: Date },
): Promise<Map<string, CallbackFailure>> {
  const out = new Map<string, CallbackFailure>();
  // On the service's clock, as its answers tell it: "not later than now" is the service's now.
  const now = client.toServerTime(window.now).getTime();
  const from = new Date(Math.min(now - 1000, Math.max(client.toServerTime(window.from).getTime() - 60_000, now - 7 * DAY + 60_000)));
  for (const api of apis) {
    const errors = endpoint(`${api}.errors`);
    for (let offset = 0; ; offset += PAGE) {
      const call = await client.call(errors, { tasks: [{ datetime_from: formatSpecDatetime(from), limit: PAGE, offset }] });
      const rows = (call.envelope.tasks?.[0]?.result ?? []) as { id?: unknown; function?: unknown; http_code?: unknown }[];
      // Newest first: the first row seen of a task carries its last answer.
      for (const r of rows) {
        if (typeof r?.id !== 'string' || !ids.has(r.id) || !CALLBACK_FUNCTIONS.has(String(r.function))) continue;
        const seen = out.get(r.id);
        if (seen) seen.count++;
        else out.set(r.id, { count: 1, lastHttpCode: typeof r.http_code === 'number' ? r.http_code : 0 });
      }
      if (rows.length < PAGE) break;
    }
  }
  return out;
}

/**
 * Asks the service to send the callbacks of these tasks again (`webhook_resend`, free,
 * 100 ids a call). Returns the ids it took and those it refused with their status (a
 * function without callbacks, an unknown id), which must be fetched instead.
 */
export async function resendCallbacks(
  client: ServiceClient,
  ids: readonly string[],
): Promise<{ resent: string[]; refused: { taskId: string; statusCode: number }[] }> {
  const resend = endpoint('appendix.webhook_resend');
  const resent: string[] = [];
  const refused: { taskId: string; statusCode: number }[] = [];
  for (let i = 0; i < ids.length; i += RESEND_MAX) {
    const chunk = ids.slice(i, i + RESEND_MAX);
    const call = await client.call(resend, { tasks: chunk.map((id) => ({ id })) });
    chunk.forEach((id, k) => {
      const verdict = call.outcome.tasks[k];
      if (verdict?.ok) resent.push(id);
      else refused.push({ taskId: id, statusCode: verdict?.statusCode ?? 0 });
    });
  }
  return { resent, refused };
}

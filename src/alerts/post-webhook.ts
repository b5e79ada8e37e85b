import { createHash, createHmac } from 'node:crypto';
import { request, type Dispatcher } from 'undici';

/** The spec of the issue: a webhook not answering within 10 s is tried again at the next run. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

export interface PostWebhookOptions {
  url: string;
  /** The JSON body, exactly as sent (the signature is over these bytes). */
  body: string;
  /** Shared secret: adds `X-Pipeline-Signature: sha256=<hex HMAC-SHA256 of the body>`. */
  secret?: string | undefined;
  /** Ids of the alerts in the body: their hash is the `X-Pipeline-Delivery` header, the same on a retry. */
  alertIds: readonly string[];
  dispatcher?: Dispatcher | undefined;
  timeoutMs?: number | undefined;
}

/** A POST's outcome: acknowledged (2xx) or why not, in words safe to log (no URL, no secret). */
export type PostResult = { ok: true; status: number } | { ok: false; status: number | null; error: string };

/**
 * POSTs one message. Never throws: a non-2xx, a refused connection or no answer within
 * the timeout is a result, and the caller leaves the alerts pending. The error text names
 * the host only, since webhook URLs often hold a token.
 */
export async function postWebhook(o: PostWebhookOptions): Promise<PostResult> {
  const timeoutMs = o.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'user-agent': 'pipeline-alerts',
    'x-pipeline-delivery': createHash('sha256')
      .update([...o.alertIds].sort().join(','))
      .digest('hex')
      .slice(0, 32),
  };
  if (o.secret) headers['x-pipeline-signature'] = `sha256=${createHmac('sha256', o.secret).update(o.body).digest('hex')}`;
  const host = safeHost(o.url);
  try {
    const res = await request(o.url, {
      method: 'POST',
      headers,
      body: o.body,
      dispatcher: o.dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body.dump().catch(() => undefined);
    if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true, status: res.statusCode };
    return { ok: false, status: res.statusCode, error: `${host} answered HTTP ${res.statusCode}` };
  } catch (err) {
    const e = err as { name?: string; code?: string; message?: string };
    const timedOut =
      e.name === 'TimeoutError' || e.name === 'AbortError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT';
    return {
      ok: false,
      status: null,
      error: timedOut
        ? `${host} did not answer within ${timeoutMs / 1000} s`
        : `${host} could not be reached (${e.code ?? e.name ?? 'error'})`,
    };
  }
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the webhook';
  }
}

/**
 * The secret path segment of a callback URL (`.../<secret>/postback?id=...`, see
 * `PushCollector`): at least 16 characters of A-Z, a-z, 0-9, `_` and `-`, right before
 * `/postback` or `/pingback` (a slash may be JSON-escaped as `\/`).
 */
const CALLBACK_KIND = /(?:\\?\/)(?:postback|pingback)\b/g;
const SECRET_CHAR = /[A-Za-z0-9_-]/;
const MIN_SECRET = 16;

/**
 * Removes callback secrets from text that is kept: the service echoes a task's
 * `postback_url` / `pingback_url` in `data` of its answers, and those bodies land under
 * `raw/`, where anyone who could read them could forge callbacks.
 */
export function redactCallbackSecrets(text: string): string {
  if (!text.includes('postback') && !text.includes('pingback')) return text;
  // Walks back from each `/postback` rather than one regex with a lookahead, which
  // backtracks quadratically over long runs of letters (base64 in a body).
  let out = '';
  let last = 0;
  for (const m of text.matchAll(CALLBACK_KIND)) {
    let start = m.index;
    while (start > last && SECRET_CHAR.test(text[start - 1]!)) start--;
    if (m.index - start >= MIN_SECRET) {
      out += `${text.slice(last, start)}***`;
      last = m.index;
    }
  }
  return out + text.slice(last);
}

/** Removes API keys and callback secrets from any text before it is logged or thrown. */
export function redact(text: string, secrets: readonly string[] = []): string {
  // A key is anything after its prefix (the spec): cut it up to where a URL, header or JSON value ends.
  let out = text.replace(/svc_(live|sandbox)_[^\s"'&,;<>]+/g, 'svc_$1_***');
  out = out.replace(/(Bearer\s+)[^\s"']+/gi, '$1***');
  out = redactCallbackSecrets(out);
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('***');
  return out;
}

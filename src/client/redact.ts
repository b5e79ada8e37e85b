/** Removes API keys from any text before it is logged or thrown. */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text.replace(/svc_(live|sandbox)_[A-Za-z0-9_-]+/g, 'svc_$1_***');
  out = out.replace(/(Bearer\s+)[^\s"']+/gi, '$1***');
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('***');
  return out;
}

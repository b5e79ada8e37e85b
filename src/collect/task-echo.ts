import { createHash } from 'node:crypto';

/**
 * What a postback's task must echo for its body to be taken as the service's answer to the task
 * this run posted. The callback URL's secret is the only proof of origin the service gives (it
 * signs nothing), and the URL (with the task's id and tag) shows in proxies' and servers' access
 * logs. The posted fields that name what was bought (the keyword, target, place, language,
 * device, and the tag) do not: the service echoes them in the task's `data` ("echo of the
 * submitted parameters"). A body whose `data` does not echo them is refused (400): the service
 * then lists the callback as failed and puts the task on the ready list, where the run fetches
 * it with `task_get`, so a genuine answer refused here is fetched, never lost.
 */
const NAMING = [
  'keyword',
  'keywords',
  'target',
  'targets',
  'url',
  'location_code',
  'location_name',
  'language_code',
  'language_name',
  'device',
  'tag',
] as const;

/** A value as compared: text without case, Unicode form or percent-escapes (the service decodes `%25`); numbers as text. */
function normal(v: unknown): string {
  if (typeof v === 'string') {
    let s = v;
    try {
      s = decodeURIComponent(v);
    } catch {
      // Not percent-encoded text: compared as sent.
    }
    return s.normalize('NFC').trim().toLowerCase();
  }
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return JSON.stringify(v.map(normal));
  // No naming field is an object; one sent back as one does not match.
  return JSON.stringify(v ?? null);
}

/** The fields of `fields` that `spec` names, and a hash of their values: a short string kept per task in flight. */
function fingerprint(fields: readonly string[], of: Record<string, unknown>): string {
  const h = createHash('sha256');
  for (const k of fields) h.update(`${k}\0${normal(of[k])}\0`);
  return `${fields.join(',')}:${h.digest('hex').slice(0, 24)}`;
}

/** What a posted task's `data` must echo (see above), or null when it names none of the fields. */
export function echoOf(spec: Record<string, unknown>): string | null {
  const fields = NAMING.filter((k) => spec[k] !== undefined);
  return fields.length === 0 ? null : fingerprint(fields, spec);
}

/** Why a postback's task entry does not echo what was posted (`echo`, from echoOf), or null when it does. */
export function echoMismatch(echo: string, entry: { data?: unknown }): string | null {
  const data = entry.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return 'its task has no data echoing what was posted';
  const fields = echo.slice(0, echo.lastIndexOf(':')).split(',');
  if (fingerprint(fields, data as Record<string, unknown>) === echo) return null;
  return `its task's data does not echo what was posted (${fields.join(', ')})`;
}

/**
 * Keys the emulator accepts when no explicit list is given, as the spec spells them:
 * `svc_live_<key>` or `svc_sandbox_<key>`. The spec gives `<key>` no length or alphabet, so
 * any non-empty run of non-space characters after the prefix is a key (as `--live-key`
 * reads it in src/cli/service-target.ts).
 */
export const KEY_PATTERN = /^svc_(live|sandbox)_\S+$/;

/** Who is calling: the key, and whether it simulates production (and so is charged). */
export interface Caller {
  key: string;
  live: boolean;
}

/**
 * Reads `Authorization: Bearer <key>`. Basic auth, a missing header or a key that is
 * not accepted all give `undefined` (HTTP 401), as the spec's Authentication rules say.
 */
export function authenticate(header: string | undefined, keys: readonly string[] | undefined): Caller | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  const key = m?.[1];
  if (!key) return undefined;
  const accepted = keys ? keys.includes(key) : KEY_PATTERN.test(key);
  if (!accepted) return undefined;
  return { key, live: key.startsWith('svc_live_') };
}

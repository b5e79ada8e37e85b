/**
 * The `data` of a task: the posted parameters, exactly as sent, framed by the call's
 * api/function/se/se_type and with the device and OS defaults made explicit, so a
 * loader can match a result to its task by `tag` and see what was actually run.
 */
export function echoData(raw: unknown, fn: string, engine: string, type: string): Record<string, unknown> {
  const base: Record<string, unknown> = { api: 'serp', function: fn, se: engine, se_type: type };
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return base;
  const posted = raw as Record<string, unknown>;
  const device = posted.device ?? 'desktop';
  return { ...base, ...posted, device, os: posted.os ?? (device === 'mobile' ? 'android' : 'windows') };
}

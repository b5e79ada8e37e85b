import type { HandlerContext } from './context.js';

/**
 * The `data` of a task: the posted parameters, exactly as sent, framed by the call's
 * api and function (and, for SERP, se/se_type with the device and OS defaults made
 * explicit), so a loader can match a result to its task by `tag` and see what was run.
 */
export function echoData(raw: unknown, fn: string, ctx: Pick<HandlerContext, 'endpoint' | 'engine' | 'type'>): Record<string, unknown> {
  const serp = ctx.endpoint.api === 'serp';
  const base: Record<string, unknown> = serp
    ? { api: 'serp', function: fn, se: ctx.engine, se_type: ctx.type }
    : { api: ctx.endpoint.api, function: fn, ...(ctx.engine.startsWith('eng') ? { se: ctx.engine } : {}) };
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return base;
  const posted = raw as Record<string, unknown>;
  if (!serp) return { ...base, ...posted };
  const device = posted.device ?? 'desktop';
  return { ...base, ...posted, device, os: posted.os ?? (device === 'mobile' ? 'android' : 'windows') };
}

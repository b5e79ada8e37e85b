import { createHash } from 'node:crypto';

/** JSON with sorted keys, so equal specs hash equally whatever their key order. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * The deterministic task tag: a hash of pipeline, run and task spec. The service echoes it
 * in `data.tag`, so a task posted before a crash can be found again and never re-bought.
 */
export function taskTag(pipeline: string, runId: string, spec: unknown): string {
  return createHash('sha256')
    .update(`${pipeline}\0${runId}\0${canonicalJson(spec)}`)
    .digest('hex')
    .slice(0, 32);
}

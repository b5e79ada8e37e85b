import { endpoint } from '../catalog/index.js';
import type { ServiceClient } from '../client/index.js';
import type { Pipeline } from '../config/index.js';
import { positionsIn } from '../config/index.js';
import { ConfigError, EtlError } from '../errors.js';
import { JOB_KINDS, type AnyJob, type PreflightIssue, type ReadReference } from '../jobs/index.js';
import type { Warehouse } from '../warehouse/index.js';

/**
 * Runs the preflight of every job kind the pipeline uses (`preflight` of its module in
 * `src/jobs/kinds/`) before anything is bought: a model the service does not offer, an AI
 * keyword data location or language its list lacks, a lighthouse version it does not list
 * would each be refused only after the other tasks were paid for. The reference lists are
 * free calls, each read once and only when a job needs it, and kept in the warehouse
 * (`reference_lists`) for REFERENCE_FRESH_DAYS: a nightly run does not fetch them again each
 * night (the service's SERP locations list is tens of thousands of places). Throws one `ConfigError` with
 * every problem (file, line, field, rule), in file order; returns the warnings (a list that
 * named nothing leaves the check to the service). A list the service does not serve (HTTP
 * 404) or fails to serve (5xx, after the client's retries) is a warning too: its values are
 * not checked and go to the service as written, which refuses what it does not know; the
 * night goes on.
 */
export async function preflightJobs(client: ServiceClient, pipeline: Pipeline, file: string, cache?: ReferenceCache): Promise<string[]> {
  const lists = new Map<string, Promise<unknown[]>>();
  /** Lists that could not be read, with the HTTP status of the answer. */
  const unread = new Map<string, number>();
  const read: ReadReference = (id) => {
    let items = lists.get(id);
    if (!items) {
      items = readList(client, id, cache).catch((err: unknown) => {
        const status = unservedStatus(err);
        if (status === undefined) throw err;
        unread.set(id, status);
        return [];
      });
      lists.set(id, items);
    }
    return items;
  };
  const issues: PreflightIssue[] = [];
  const warnings: string[] = [];
  for (const kind of JOB_KINDS) {
    if (!kind.preflight) continue;
    const jobs = pipeline.jobs.flatMap((job: AnyJob, at) => (job.kind === kind.kind ? [{ at, job }] : []));
    if (jobs.length === 0) continue;
    const r = await kind.preflight(jobs as never, read);
    issues.push(...r.issues);
    warnings.push(...r.warnings);
  }
  for (const [id, status] of unread) {
    const name = listName(id);
    // The kinds say "the <…>/<list> list named no …" of an empty answer: here it was never read.
    const empty = `${name.split('/').slice(-2).join('/')} list named no`;
    for (let i = warnings.length - 1; i >= 0; i--) if (warnings[i]!.includes(empty)) warnings.splice(i, 1);
    warnings.push(
      `the ${name} list could not be read (HTTP ${status}${status === 404 ? ', not served' : ''}): the values it would check were not checked and go to the service as written (it refuses what it does not know)`,
    );
  }
  if (issues.length === 0) return warnings;
  // File order: by job, then as each kind found them.
  const ordered = issues.map((x, i) => ({ x, i })).sort((a, b) => Number(a.x.path[1]) - Number(b.x.path[1]) || a.i - b.i);
  const where = await positionsIn(file);
  throw new ConfigError(
    ordered.map(({ x }) => ({ file, ...(where?.(x.path) ?? { line: 0, column: 0 }), field: fieldName(x.path), rule: x.rule })),
    'nothing was bought (only the free reference lists these checks need were read)',
  );
}

/** The HTTP status of a reference list the service does not serve (404) or failed to serve (5xx); undefined for any other failure. */
function unservedStatus(err: unknown): number | undefined {
  if (!(err instanceof EtlError) || err.context.stage !== 'client') return undefined;
  const status = err.context.httpStatus;
  return typeof status === 'number' && (status === 404 || status >= 500) ? status : undefined;
}

/** A list's path as the warnings name it: `serp/engA/languages`. */
function listName(id: string): string {
  return endpoint(id).path.replace(/^\/v3\//, '');
}

function fieldName(path: readonly (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** Where read reference lists are kept, and the run's clock. */
export interface ReferenceCache {
  wh: Warehouse;
  now: () => Date;
}

/** Days a reference list read from the service is used before it is read again. */
export const REFERENCE_FRESH_DAYS = 7;

/** The items of a reference list: from the warehouse's copy while it is fresh, else from the service (and kept). */
async function readList(client: ServiceClient, id: string, cache: ReferenceCache | undefined): Promise<unknown[]> {
  if (cache) {
    const since = new Date(cache.now().getTime() - REFERENCE_FRESH_DAYS * 86_400_000).toISOString();
    const [kept] = await cache.wh.all<{ items: string }>(
      `SELECT items::VARCHAR AS items FROM reference_lists WHERE endpoint_id = $1 AND fetched_at > $2::TIMESTAMPTZ ORDER BY fetched_at DESC LIMIT 1`,
      [id, since],
    );
    if (kept) return JSON.parse(kept.items) as unknown[];
  }
  const call = await client.call(endpoint(id));
  const items = (call.envelope.tasks ?? []).flatMap((t) => t.result ?? []);
  // An empty list is not kept: the checks then leave the field to the service, and the next run asks again.
  if (cache && items.length > 0) {
    await cache.wh.transaction(async () => {
      await cache.wh.run(`DELETE FROM reference_lists WHERE endpoint_id = $1`, [id]);
      await cache.wh.run(`INSERT INTO reference_lists VALUES ($1, $2::TIMESTAMPTZ, $3::JSON)`, [
        id,
        cache.now().toISOString(),
        JSON.stringify(items),
      ]);
    });
  }
  return items;
}

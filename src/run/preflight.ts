import { endpoint } from '../catalog/index.js';
import type { ServiceClient } from '../client/index.js';
import type { Pipeline } from '../config/index.js';
import { positionsIn } from '../config/positions.js';
import { ConfigError } from '../errors.js';
import { JOB_KINDS, type AnyJob, type PreflightIssue, type ReadReference } from '../jobs/index.js';

/**
 * Runs the preflight of every job kind the pipeline uses (`preflight` of its module in
 * `src/jobs/kinds/`) before anything is bought: a model the service does not offer, an AI
 * keyword data location or language its list lacks, a lighthouse version it does not list
 * would each be refused only after the other tasks were paid for. The reference lists are
 * free calls, each read once and only when a job needs it. Throws one `ConfigError` with
 * every problem (file, line, field, rule), in file order; returns the warnings (a list that
 * named nothing leaves the check to the service).
 */
export async function preflightJobs(client: ServiceClient, pipeline: Pipeline, file: string): Promise<string[]> {
  const lists = new Map<string, Promise<unknown[]>>();
  const read: ReadReference = (id) => {
    let items = lists.get(id);
    if (!items) {
      items = client.call(endpoint(id)).then((call) => (call.envelope.tasks ?? []).flatMap((t) => t.result ?? []));
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
  if (issues.length === 0) return warnings;
  // File order: by job, then as each kind found them.
  const ordered = issues.map((x, i) => ({ x, i })).sort((a, b) => Number(a.x.path[1]) - Number(b.x.path[1]) || a.i - b.i);
  const where = await positionsIn(file);
  throw new ConfigError(
    ordered.map(({ x }) => ({ file, ...(where?.(x.path) ?? { line: 0, column: 0 }), field: fieldName(x.path), rule: x.rule })),
  );
}

function fieldName(path: readonly (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

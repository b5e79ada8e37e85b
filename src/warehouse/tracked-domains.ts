import type { TableSpec } from './columns.js';
import type { Warehouse } from './warehouse.js';

/** The domains each SERP job follows (`track_domains`), as its pipeline's latest run listed them. */
export const trackedDomainsTable: TableSpec = {
  name: 'tracked_domains',
  grain: "one row per pipeline, SERP job and domain of its track_domains, as of the pipeline's latest run",
  columns: [
    { name: 'pipeline', kind: 'varchar', key: true },
    { name: 'job', kind: 'varchar', key: true, doc: 'the SERP job whose track_domains lists the domain' },
    { name: 'domain', kind: 'varchar', key: true, doc: 'as written in the pipeline file, lower-cased (the models drop a leading www.)' },
    { name: 'first_seen_at', kind: 'timestamptz', doc: 'start of the first run that listed it (since it was last removed)' },
    { name: 'first_run_id', kind: 'varchar', doc: 'the run that first listed it' },
    { name: 'updated_at', kind: 'timestamptz', doc: 'start of the latest run that listed it' },
    { name: 'run_id', kind: 'varchar', doc: 'the latest run that listed it' },
  ],
};

/** A job as far as tracking goes: SERP jobs carry `track_domains`, other kinds none. */
export interface TrackingJob {
  name: string;
  track_domains?: readonly string[] | undefined;
}

/**
 * Writes a pipeline's tracked domains at the start of its run `runId`, in one
 * transaction: every (job, domain) of its jobs' `track_domains` is kept (with its
 * first-seen date) or added, and what the file no longer lists is removed, so the table
 * always says what each job tracks now. Returns the number of domains tracked.
 */
export async function recordTrackedDomains(wh: Warehouse, pipeline: { name: string; jobs: readonly TrackingJob[] }, runId: string, at: Date): Promise<number> {
  const listed = new Map<string, { job: string; domain: string }>();
  for (const job of pipeline.jobs) {
    for (const d of job.track_domains ?? []) {
      const domain = d.trim().toLowerCase();
      listed.set(`${job.name}\u0000${domain}`, { job: job.name, domain });
    }
  }
  const before = await wh.all<{ job: string; domain: string; first_seen_at: string; first_run_id: string | null }>(
    `SELECT job, domain, first_seen_at::VARCHAR AS first_seen_at, first_run_id FROM tracked_domains WHERE pipeline = $1`,
    [pipeline.name],
  );
  const first = new Map(before.map((r) => [`${r.job}\u0000${r.domain}`, r]));
  await wh.transaction(async () => {
    await wh.run(`DELETE FROM tracked_domains WHERE pipeline = $1`, [pipeline.name]);
    for (const [key, { job, domain }] of listed) {
      const old = first.get(key);
      await wh.run(`INSERT INTO tracked_domains VALUES ($1, $2, $3, $4::TIMESTAMPTZ, $5, $6::TIMESTAMPTZ, $7)`, [
        pipeline.name,
        job,
        domain,
        old?.first_seen_at ?? at.toISOString(),
        old ? old.first_run_id : runId,
        at.toISOString(),
        runId,
      ]);
    }
  });
  return listed.size;
}

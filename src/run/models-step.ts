import { embeddingJobs } from '../jobs/index.js';
import {
  buildAndTestModels,
  clusterKeywords,
  DEFAULT_SQL_DIR,
  discoverModels,
  formatBuild,
  formatTests,
  type ClusterKeywordsResult,
} from '../models/index.js';
import { plannedKeywords, type PlannedTask } from '../plan/index.js';
import type { RunContext } from './context.js';
import { killPoint } from './kill-point.js';
import { serviceEmbed, serviceLabel } from './service-fns.js';

/** What the models step did, for the summary and the exit code. */
export interface ModelsOutcome {
  built: number;
  failed: number;
  tests: number;
  testsPassed: number;
  /** Tests that warned (`severity: warn`), e.g. a SERP item type never seen before, its rows kept. */
  warned: number;
  /** The warned tests, formatted for people; empty when none. */
  warnings: string;
  /** No model failed and no test failed or errored. */
  ok: boolean;
  /** The failed builds and tests, formatted for people; empty when ok. */
  report: string;
  /** The three slowest builds (name, how it was built, milliseconds): where a night's model time goes. */
  slowest: { name: string; mode: string; ms: number }[];
}

/**
 * Builds the SQL models (incrementally where they say so) and runs their sidecar tests, on
 * the run's own connection: the step that keeps the marts BI reads in step with the data,
 * scheduled or not.
 */
export async function modelsStep(c: RunContext): Promise<ModelsOutcome> {
  const models = await discoverModels(c.o.sqlDir ?? DEFAULT_SQL_DIR);
  const r = await buildAndTestModels(c.wh, models, { test: true, onModel: () => killPoint('models', 'middle') });
  const failed = r.builds.filter((b) => b.status === 'failed');
  const badTests = r.tests.filter((t) => t.status === 'failed' || t.status === 'error');
  const warned = r.tests.filter((t) => t.status === 'warned');
  const report = [...failed.map((f) => `${formatBuild(f)}\n`), badTests.length ? formatTests(badTests) : ''].join('');
  const outcome = {
    built: r.builds.filter((b) => b.status === 'built').length,
    failed: failed.length,
    tests: r.tests.length,
    testsPassed: r.tests.filter((t) => t.status === 'passed' || t.status === 'skipped').length,
    warned: warned.length,
    warnings: warned.length ? formatTests(warned) : '',
    ok: r.ok,
    report,
    slowest: [...r.builds]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 3)
      .map((b) => ({ name: b.name, mode: b.mode ?? b.materialized, ms: b.ms })),
  };
  c.log.info(
    { built: outcome.built, failed: outcome.failed, tests: outcome.tests, testsPassed: outcome.testsPassed, warned: outcome.warned },
    'models',
  );
  if (warned.length) c.log.warn({ warnings: outcome.warnings }, 'model tests warned');
  return outcome;
}

/** One clustering of an `embeddings` job's keywords. */
export type ClustersOutcome = ClusterKeywordsResult & { job: string };

/**
 * Clusters the keywords of each `embeddings` job of the pipeline (vectors from the cache the
 * job just filled) and labels new clusters with one chat call each, as `pipeline models
 * cluster` does; every call is landed and in the ledger under the run's id.
 */
export async function clustersStep(c: RunContext, tasks: readonly PlannedTask[]): Promise<ClustersOutcome[]> {
  const jobs = embeddingJobs(c.o.pipeline.jobs);
  const keywords = plannedKeywords(tasks);
  const out: ClustersOutcome[] = [];
  for (const job of jobs) {
    const r = await clusterKeywords(c.wh, {
      model: job.model,
      dimensions: job.dimensions,
      embed: serviceEmbed(c.client, job.model, job.requestDimensions),
      label: async (kw) => {
        const label = await serviceLabel(c.client)(kw);
        killPoint('clusters', 'middle');
        return label;
      },
      keywords,
      now: c.now,
    });
    c.note(
      `${job.name}: ${r.keywords} keyword(s) in ${r.clusters} cluster(s) (silhouette ${r.silhouette.toFixed(3)}), ${r.labelCalls} label call(s)`,
    );
    out.push({ ...r, job: job.name });
  }
  return out;
}

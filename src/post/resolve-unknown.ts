import { endpoint, monthsBefore } from '../catalog/index.js';
import type { ServiceClient } from '../client/index.js';
import { EtlError } from '../errors.js';
import { ledgerWriter, runQueries, type RunStore, type Warehouse } from '../warehouse/index.js';
import { findTasksByTag, type TagMatch } from './find-by-tag.js';

type OpenTask = Awaited<ReturnType<RunStore['openTasks']>>[number];

/** How a run's tasks of unknown outcome were settled. */
export interface Resolution {
  found: number;
  notCreated: number;
  stillUnknown: number;
  /** Ledger rows of lost POSTs priced now (ledgerWriter.estimateLost): a null charge had no ratio to price it at. */
  estimated: { callId: string; chargeCny: string | null; costUsd: string }[];
  /** Tasks found whose POST has no ledger row (lostChargesNote). */
  unrecorded: number;
  error?: string;
}

/**
 * Settles a run's tasks whose POST outcome is unknown (`planned` after a crash, `unknown`
 * after a timeout), as recorded in state: those the service created are recorded with
 * their ids (to be collected, not bought again); those it never created become `unsent`,
 * to be posted. `id_list` with metadata looks back one month, so a tag not found among
 * tasks older than that proves nothing: such tasks stay `unknown` and are reported.
 */
export async function resolveUnknown(a: {
  wh: Warehouse;
  client: ServiceClient;
  store: RunStore;
  runId: string;
  now: () => Date;
  /** Waits out the current second before the lookup (see below); a timer by default, which an abort does not cut short. */
  sleep?: (ms: number) => Promise<void>;
}): Promise<Resolution> {
  const open = await a.store.openTasks();
  // id_list windows are whole seconds and may not end after the service's now, so a task
  // created in the current second is listed only once that second is over: looking it up
  // sooner would miss it and buy it again. Every task here was sent before `sent`; the look-up
  // waits until the service's clock has passed it (findTasksByTag).
  const sleep = a.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const sent = a.now();
  let found = 0;
  let notCreated = 0;
  let stillUnknown = 0;
  let error: string | undefined;
  const foundTags: string[] = [];
  for (const [endpointId, tasks] of byEndpoint(open)) {
    const now = a.now();
    const earliest = new Date(Math.min(...tasks.map((t) => t.plannedAt.getTime())));
    let matches: TagMatch[];
    try {
      matches = await findTasksByTag(
        a.client,
        endpoint(endpointId),
        new Set(tasks.map((t) => t.tag)),
        { from: earliest, now: sent },
        sleep,
      );
    } catch (err) {
      if (!(err instanceof EtlError) || err.code === 'ETL_AUTH') throw err;
      // The endpoints looked up before this one are settled: their lost POSTs are priced below.
      error = `could not look up ${tasks.length} task(s) of unknown outcome by tag (${err.message}); they are not re-posted`;
      stillUnknown = open.length - found - notCreated;
      break;
    }
    const settled = await recordLookUp(a.store, tasks, matches, now, earliest);
    foundTags.push(...settled.tags);
    found += settled.found;
    notCreated += settled.notCreated;
    stillUnknown += settled.stillUnknown;
  }
  // The lost POSTs whose tasks are all resolved now: their ledger rows get a price.
  const estimated = await ledgerWriter.estimateLost(
    a.wh,
    open.flatMap((t) => (t.postCallId ? [t.postCallId] : [])),
  );
  // Found tasks whose POST has no ledger row at all: posted by a version that wrote a POST's row
  // only once it was answered, and killed while it was out. (An answered POST, a 5xx included,
  // has its answer's row; a lost one, the row written before it was sent.)
  const unrecorded = await runQueries.taggedWithoutLedgerRow(a.wh, a.runId, foundTags);
  return { found, notCreated, stillUnknown, estimated, unrecorded, ...(error === undefined ? {} : { error }) };
}

/** The open tasks by endpoint, in the order first seen. */
function byEndpoint(open: readonly OpenTask[]): Map<string, OpenTask[]> {
  const m = new Map<string, OpenTask[]>();
  for (const t of open) m.set(t.endpointId, [...(m.get(t.endpointId) ?? []), t]);
  return m;
}

/**
 * Records what the look-up by tag of one endpoint's tasks found: the tasks found as posted, with
 * their ids; the others as never created, or as still unknown when the earliest of them is past
 * id_list's one-month look-back.
 */
async function recordLookUp(
  store: RunStore,
  tasks: readonly OpenTask[],
  matches: readonly TagMatch[],
  now: Date,
  earliest: Date,
): Promise<{ tags: string[]; found: number; notCreated: number; stillUnknown: number }> {
  const hit = new Set(matches.map((m) => m.tag));
  await store.recordPosted(
    matches.map((m) => ({
      tag: m.tag,
      taskId: m.taskId,
      ok: true,
      statusCode: 20100,
      message: 'found by tag with id_list after an unknown POST outcome',
      // id_list's cost at creation: what a refund is measured against, and what prices the lost POST.
      costUsd: m.cost ?? null,
    })),
    now,
  );
  const missing = tasks.filter((t) => !hit.has(t.tag)).map((t) => t.tag);
  const settled = { tags: [...hit], found: matches.length, notCreated: 0, stillUnknown: 0 };
  if (earliest.getTime() - 60_000 < monthsBefore(now, 1)) {
    await store.recordUnknown(
      missing,
      'posted more than a month ago: id_list cannot tell whether the service created it, so it is not posted again',
    );
    settled.stillUnknown = missing.length;
  } else {
    await store.recordUnsent(missing, 'not found by tag with id_list: the service never created it');
    settled.notCreated = missing.length;
  }
  return settled;
}

import { endpoint, monthsBefore } from '../catalog/index.js';
import type { ServiceClient } from '../client/index.js';
import { EtlError } from '../errors.js';
import { ledgerWriter, runQueries, type RunStore, type Warehouse } from '../warehouse/index.js';
import { findTasksByTag } from './find-by-tag.js';
import { fromMicros, toMicros } from './money.js';

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
}): Promise<{
  found: number;
  notCreated: number;
  stillUnknown: number;
  /** Ledger rows of lost POSTs priced now (ledgerWriter.estimateLost): a null charge had no ratio to price it at. */
  estimated: { callId: string; chargeCny: string | null; costUsd: string }[];
  /** Tasks found whose POST has no ledger row (lostChargesNote). */
  unrecorded: number;
  error?: string;
}> {
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
  const byEndpoint = new Map<string, typeof open>();
  for (const t of open) byEndpoint.set(t.endpointId, [...(byEndpoint.get(t.endpointId) ?? []), t]);
  for (const [endpointId, tasks] of byEndpoint) {
    const now = a.now();
    const earliest = new Date(Math.min(...tasks.map((t) => t.plannedAt.getTime())));
    const beyondLookBack = earliest.getTime() - 60_000 < monthsBefore(now, 1);
    let matches;
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
    const hit = new Set(matches.map((m) => m.tag));
    foundTags.push(...hit);
    await a.store.recordPosted(
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
    found += matches.length;
    if (beyondLookBack) {
      await a.store.recordUnknown(
        missing,
        'posted more than a month ago: id_list cannot tell whether the service created it, so it is not posted again',
      );
      stillUnknown += missing.length;
    } else {
      await a.store.recordUnsent(missing, 'not found by tag with id_list: the service never created it');
      notCreated += missing.length;
    }
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

/**
 * What a run says of the charges of the POSTs that created tasks found by tag: those whose answer
 * never came back are in the ledger as an estimate (`charge_estimated`), or unknown; those with
 * no ledger row (`unrecorded` tasks) are not in it. Empty when every such charge came with its
 * answer.
 */
export function lostChargesNote(
  estimated: readonly { callId: string; chargeCny: string | null; costUsd: string }[],
  unrecorded = 0,
): string {
  // A POST none of whose tasks was created cost nothing: nothing to say of it.
  const lost = estimated.filter((e) => toMicros(e.costUsd) !== 0n);
  if (lost.length === 0 && unrecorded === 0) return '';
  const priced = lost.filter((e) => e.chargeCny !== null);
  const sum = priced.reduce((s, e) => s + toMicros(e.chargeCny), 0n);
  const parts = ['The service charged the POST that created them, but its answer (with the charge) never came back'];
  if (priced.length > 0)
    parts.push(
      `the ledger holds ${fromMicros(sum)} CNY for ${priced.length === 1 ? 'it' : `${priced.length} such POSTs`}, estimated from id_list's USD cost (charge_estimated)`,
    );
  if (priced.length < lost.length)
    parts.push(`${lost.length - priced.length} POST(s) have no earlier charge to price them by: their charge is unknown`);
  if (unrecorded > 0)
    parts.push(
      `the POST of ${unrecorded} of them has no ledger row (sent by an older version of this tool): that charge is not in the ledger`,
    );
  return `${parts.join('; ')}. \`pipeline reconcile\` lists ${lost.length === 1 ? 'it' : lost.length === 0 ? 'the difference' : 'them'}`;
}

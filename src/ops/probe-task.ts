import type { ClientOptions, ServiceClient } from '../client/index.js';
import type { ServiceReadingsRecord } from '../warehouse/index.js';
import { readAiCode } from './probe-ai-code.js';
import { idListNote, type ClockSkew } from './probe-clock.js';
import type { ProbePlan } from './probe-plan.js';
import { postProbeTasks, tasksPerPostReading } from './probe-post.js';
import { waitUntilReady, type ReadyWait } from './probe-ready.js';
import { readRefund } from './probe-refund.js';

/** What the probe's charged part works with: the plan, the client, and what the free reads saw. */
export interface ProbeSession extends ReadyWait {
  plan: ProbePlan;
  client: ServiceClient;
  /** The client's options: id_list is looked up by clients on other clocks made from them. */
  clientOptions: ClientOptions;
  /** The readings so far; the charged part fills in the rest. */
  readings: ServiceReadingsRecord['readings'];
  clock: ClockSkew;
  /** The balance before the POST, CNY, when user_data gave it. */
  balance0: number | null;
}

/**
 * The probe's charged part: one POST, then the readings that need its task (tasks a POST, ready
 * list paging, id_list's clock, refunds, `.ai` codes). A reading that cannot be had is `unknown`
 * with why. Returns what the POST was charged.
 */
export async function probeTask(s: ProbeSession): Promise<{ chargedCny: number; serpTaskCny: number | null }> {
  const { plan, client, readings: r } = s;
  // A lost answer leaves the readings that need the POST unknown.
  const post = await postProbeTasks(client, plan, s.now);
  if ('failed' in post) {
    const why = `the probe's task_post failed: ${post.failed}`;
    for (const k of ['refunds', 'asyncTasksPerPost', 'readyListPaging', 'aiCodes'] as const) r[k] = { value: 'unknown', detail: why };
    return { chargedCny: 0, serpTaskCny: null };
  }
  const charged = { chargedCny: post.chargedCny, serpTaskCny: post.serpTaskCny };
  r.asyncTasksPerPost = tasksPerPostReading(plan, post);
  const { first } = post;
  if (!first?.id || first.status_code !== 20100) {
    const why = `the probe task was not created (${first?.status_code ?? 'no task'} ${first?.status_message ?? ''})`.trim();
    for (const k of ['refunds', 'readyListPaging', 'aiCodes'] as const) r[k] = { value: 'unknown', detail: why };
    return charged;
  }

  const wait = await waitUntilReady(client, first.id, s);
  r.readyListPaging = wait.readyListPaging;

  // A task is listed by id_list by its posting time, to the second: let that second pass first.
  await s.sleep(Math.max(0, 2000 - (s.now().getTime() - post.postedAt)));
  const note = await idListNote(s.clientOptions, first.id, s.clock.skewMs, s.now);
  if (typeof r.clockSkewSeconds.value === 'number') r.clockSkewSeconds.detail += note;

  if (!wait.ready) {
    const why = `the task was not done within ${Math.round(s.maxWaitMs / 1000)} s; it stays in the ready list for a run to collect`;
    r.refunds = { value: 'unknown', detail: why };
    r.aiCodes = { value: 'unknown', detail: why };
    return charged;
  }
  const refund = await readRefund(client, plan, post, first.id, s.balance0);
  r.refunds = refund.reading;
  r.aiCodes = await readAiCode(s.clientOptions, `${refund.getPath.replace(/\/+$/, '')}.ai`, s.clientOptions.dispatcher);
  return charged;
}

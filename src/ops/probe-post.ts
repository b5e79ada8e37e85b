import { endpoint, taskUnits } from '../catalog/index.js';
import type { CallResult, ServiceClient } from '../client/index.js';
import type { ServiceReadingsRecord } from '../warehouse/index.js';
import { cny4, priceAt, PROBE_ENDPOINT, PROBE_KEYWORD, PROBE_LIMIT_CNY, up4, type ProbePlan } from './probe-plan.js';

export type ProbeTask = NonNullable<CallResult['envelope']['tasks']>[number];

/** What the probe's one charged POST created and cost. */
export interface ProbePost {
  /** The probe task (deep, for a refund) and the second task, as answered. */
  first?: ProbeTask;
  second?: ProbeTask;
  chargedCny: number;
  /** CNY of a SERP task of the first 10 results, from the charge, when any task was created. */
  serpTaskCny: number | null;
  /** The balance the POST's answer gave, CNY, if it gave one. */
  balanceCny: string | null;
  /** Our clock when the POST was sent, ms. */
  postedAt: number;
}

/**
 * The one charged call: the probe task and, when the plan affords it, a second one. The client
 * never sends it again once it may have been charged; only a refusal that created nothing is
 * retried. A POST that failed returns its error's message.
 */
export async function postProbeTasks(client: ServiceClient, plan: ProbePlan, now: () => Date): Promise<ProbePost | { failed: string }> {
  const tasks: Record<string, unknown>[] = [
    { keyword: PROBE_KEYWORD, location_code: 2840, language_code: 'en', depth: plan.depth, tag: 'doctor-probe-refund' },
  ];
  if (plan.tasks === 2)
    tasks.push({ keyword: PROBE_KEYWORD, location_code: 2840, language_code: 'en', depth: 10, tag: 'doctor-probe-second' });
  let post: CallResult;
  const postedAt = now().getTime();
  try {
    post = await client.call(endpoint(PROBE_ENDPOINT), { tasks });
  } catch (err) {
    return { failed: (err as Error).message };
  }
  const [first, second] = post.envelope.tasks ?? [];
  const units = (post.envelope.tasks ?? []).reduce(
    (a, t) => a + (t.status_code === 20100 ? taskUnits('serp', t === first ? tasks[0]! : tasks[1]!) : 0),
    0,
  );
  return {
    first,
    second,
    chargedCny: Number(post.charge.chargeCny ?? 0),
    serpTaskCny: units > 0 && post.charge.chargeCny !== null ? Number(post.charge.chargeCny) / units : null,
    balanceCny: post.charge.balanceCny,
    postedAt,
  };
}

/** Tasks one POST takes, from what the second task of the POST got (not probed when the plan posted one). */
export function tasksPerPostReading(plan: ProbePlan, post: ProbePost): ServiceReadingsRecord['readings']['asyncTasksPerPost'] {
  const { second, chargedCny } = post;
  const chargeNote = chargedCny > plan.costCny ? ` (charged ${cny4(chargedCny)} CNY, over the stated ${cny4(plan.costCny)})` : '';
  if (plan.tasks === 1)
    return {
      value: 'not-probed',
      detail: `2 tasks (${cny4(priceAt(plan.baseCny, 20) + up4(plan.baseCny))} CNY at the ${plan.baseSource}'s price) would pass the ${PROBE_LIMIT_CNY} CNY limit; a run with the ledger's price of a SERP task lets the next probe post 2`,
    };
  if (second?.status_code === 40006) return { value: 1, detail: `the second task of a 2-task POST got 40006 (not charged)${chargeNote}` };
  if (second?.status_code === 20100)
    return { value: 100, detail: `both tasks of a 2-task POST were created (the spec's other figure is 100 a POST)${chargeNote}` };
  return { value: 'unknown', detail: `the second task got ${second?.status_code ?? 'no answer'} ${second?.status_message ?? ''}`.trim() };
}

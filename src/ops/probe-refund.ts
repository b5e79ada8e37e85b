import { endpoint } from '../catalog/index.js';
import type { ServiceClient } from '../client/index.js';
import type { ServiceReadingsRecord } from '../warehouse/index.js';
import { cny4, type ProbePlan } from './probe-plan.js';
import type { ProbePost, ProbeTask } from './probe-post.js';

type RefundsReading = ServiceReadingsRecord['readings']['refunds'];

/**
 * How a refund of unused depth shows, once the probe task is done: its `cost` at creation and at
 * task_get, and the balance after the POST and after completion. Fetches the second task too, so
 * it leaves the ready list. `taskId` is the probe task's id. Also the path of the done task's task_get, for its `.ai` variant.
 */
export async function readRefund(
  client: ServiceClient,
  plan: ProbePlan,
  post: ProbePost,
  taskId: string,
  balance0: number | null,
): Promise<{ reading: RefundsReading; getPath: string }> {
  const { first, second } = post;
  const balance1 = post.balanceCny !== null ? Number(post.balanceCny) : balance0 !== null ? balance0 - post.chargedCny : null;
  const get = await client.call(endpoint('serp.engA.organic.task_get.advanced'), { taskId });
  const done: ProbeTask | undefined = get.envelope.tasks?.[0];
  if (second?.status_code === 20100 && second.id && second.id !== taskId)
    await client.call(endpoint('serp.engA.organic.task_get.advanced'), { taskId: second.id }).catch(() => {});
  const organic = ((done?.result?.[0] as { items?: { type?: string }[] } | undefined)?.items ?? []).filter(
    (i) => i.type === 'organic',
  ).length;
  const user2 = await client.call(endpoint('appendix.user_data'));
  const balance2 = (user2.envelope.tasks?.[0]?.result?.[0] as { money?: { balance?: number } } | undefined)?.money?.balance;
  const reading = refundsReading({
    depth: plan.depth,
    organic,
    costAtPost: typeof first?.cost === 'number' ? first.cost : null,
    costAtGet: typeof done?.cost === 'number' ? done.cost : null,
    balance1,
    balance2,
  });
  return { reading, getPath: get.path };
}

/** The refund reading from what was seen: a drop of the task's cost, else a rise of the balance, else none. */
function refundsReading(s: {
  depth: number;
  organic: number;
  costAtPost: number | null;
  costAtGet: number | null;
  balance1: number | null;
  balance2: number | undefined;
}): RefundsReading {
  const { costAtPost, costAtGet, balance1, balance2 } = s;
  const back = balance1 !== null && typeof balance2 === 'number' ? Math.round((balance2 - balance1) * 10_000) / 10_000 : null;
  const seen = `cost ${costAtPost ?? '?'} USD at creation, ${costAtGet ?? '?'} USD at task_get; balance ${balance1 ?? '?'} → ${balance2 ?? '?'} CNY after completion; ${s.organic} organic result(s) of depth ${s.depth}`;
  if (costAtPost !== null && costAtGet !== null && costAtGet < costAtPost)
    return { value: 'task-cost', detail: `the done task's cost dropped: ${seen}` };
  if (back !== null && back > 0)
    return {
      value: 'balance',
      detail: `the cost stayed, the balance rose by ${cny4(back)} CNY: ${seen} (other spending on the account at the same time would hide it)`,
    };
  if (costAtPost === null || costAtGet === null || back === null) return { value: 'unknown', detail: `not enough seen: ${seen}` };
  return { value: 'none-seen', detail: `no refund: ${seen}${s.organic >= s.depth ? ' (the depth was served in full)' : ''}` };
}

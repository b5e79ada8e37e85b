import { describe, expect, it } from 'vitest';
import { sandboxOptionsFromArgs } from '../../src/cli/commands/sandbox.js';
import { harness, SERP, serpTask, type Json } from './sandbox-harness.js';

// Issue 46: ranks drift by the emulator's date, the same whatever order tasks come in, and a
// tracked domain can be given a rank distribution.

const KEYWORDS = ['trail running shoes', 'best hiking boots', 'tent for two', 'rain jacket', 'camping stove'];
const DAY = 86_400_000;

async function organicByKeyword(h: Awaited<ReturnType<typeof harness>>, keywords: string[]): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const keyword of keywords) {
    const r = await h.call('POST', `${SERP}/live/advanced`, { body: [serpTask(keyword, { depth: 30 })] });
    expect(r.status).toBe(200);
    const items = r.body.tasks[0].result[0].items as Json[];
    out[keyword] = items.filter((i) => i.type === 'organic').map((i) => `${i.rank_group} ${i.url}`);
  }
  return out;
}

describe('the emulator’s ranks by date', () => {
  it('serves the same SERPs for the same seed and date whatever the order of requests, other SERPs on another day', async () => {
    const rankProfiles = { 'mysite.example': { top10: 0.4, top11to30: 0.2, beyond100: 0.4 } };
    const a = await harness({ seed: 4, rankProfiles });
    const b = await harness({ seed: 4, rankProfiles: 'mysite.example=0.4/0.2/0.4' });
    const forward = await organicByKeyword(a, KEYWORDS);
    await organicByKeyword(b, ['unrelated keyword asked first']);
    expect(await organicByKeyword(b, [...KEYWORDS].reverse())).toEqual(forward);
    a.advance(DAY);
    const next = await organicByKeyword(a, KEYWORDS);
    expect(next).not.toEqual(forward);
    // the profiled domain shows up, at most once per SERP
    const mine = Object.values(forward).map((urls) => urls.filter((u) => u.includes('//mysite.example/')).length);
    expect(mine.every((n) => n <= 1)).toBe(true);
    expect(Object.values({ ...forward, ...next }).some((urls) => urls.some((u) => u.includes('//mysite.example/')))).toBe(true);
  });

  it('keeps the profile on a standard task, done and collected later', async () => {
    const h = await harness({ seed: 4, rankProfiles: { 'mysite.example': { top10: 1, top11to30: 0, beyond100: 0 } }, readyAfterMs: 10 });
    const post = await h.call('POST', `${SERP}/task_post`, { body: [serpTask('trail running shoes', { depth: 10 })] });
    const id = post.body.tasks[0].id as string;
    h.advance(60_000);
    const got = await h.call('GET', `${SERP}/task_get/advanced/${id}`);
    const organic = (got.body.tasks[0].result[0].items as Json[]).filter((i) => i.type === 'organic');
    expect(organic).toHaveLength(10);
    expect(organic.filter((i) => i.domain === 'mysite.example')).toHaveLength(1);
  });

  it('pipeline sandbox --rank-profile reads domain=top10/top11to30/beyond100', () => {
    const args = {
      port: 0,
      host: '127.0.0.1',
      seed: 1,
      'ready-after': 2,
      balance: '1000.0000',
      faults: 'none',
      'time-scale': 1,
      admin: false,
      'rate-limits': false,
      'sandbox-key': 'svc_sandbox_x',
      'live-key': 'svc_live_testx',
    };
    expect(sandboxOptionsFromArgs({ ...args, 'rank-profile': 'mysite.example=0.4/0.2/0.4' }).options.rankProfiles).toEqual({
      'mysite.example': { top10: 0.4, top11to30: 0.2, beyond100: 0.4 },
    });
    expect(sandboxOptionsFromArgs(args).options.rankProfiles).toBeUndefined();
  });
});

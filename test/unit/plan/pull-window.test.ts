import { describe, expect, it } from 'vitest';
import { parsePipeline } from '../../../src/config/index.js';
import { planPipeline, pullNightTooLong } from '../../../src/plan/index.js';

const NOW = new Date('2026-11-20T09:00:00Z');

function plan(keywords: number, schedule?: string) {
  const list = Array.from({ length: keywords }, (_, i) => JSON.stringify(`window keyword ${i}`)).join(', ');
  const text = `name: window\n${schedule ? `schedule: '${schedule}'\n` : ''}jobs:\n  - kind: serp\n    depth: 10\n    locations: [2840]\n    keywords: [${list}]\n`;
  const p = parsePipeline(text, 'window.yaml', {});
  return { p, plan: planPipeline(p, 'run-1') };
}

let big: ReturnType<typeof plan> | undefined;
/** The 100,000-task plan, made once (planning it takes seconds). */
const agency = () => (big ??= plan(100_000));

describe('pullNightTooLong', () => {
  it('refuses a 100,000-task night without a schedule: pull takes over a day at 60 SERP calls a minute', () => {
    const { plan: pl } = agency();
    const r = pullNightTooLong(pl, { now: NOW });
    expect(r).not.toBeNull();
    // 1,000 POSTs + 100,000 task_get + 1 tasks_ready, 60 a minute.
    expect(r!.hours).toBeCloseTo(101_001 / 60 / 60, 3);
    expect(r!.windowHours).toBe(24);
    expect(r!.message).toMatch(/by pull takes at least 28\.1 h/);
    expect(r!.message).toMatch(/Use push/);
  });

  it('passes a night pull finishes within the day', () => {
    const { plan: pl } = plan(1000);
    expect(pullNightTooLong(pl, { now: NOW })).toBeNull();
  });

  it('takes the window from the schedule: a 400-task pull night every 5 minutes would overlap the next (6.75 min)', () => {
    const { p, plan: pl } = plan(400, '*/5 * * * *');
    const r = pullNightTooLong(pl, { schedule: p.schedule, timezone: p.timezone, now: NOW });
    expect(r).not.toBeNull();
    expect(r!.windowHours).toBeCloseTo(5 / 60, 6);
    expect(r!.message).toMatch(/between nights of the schedule '\*\/5 \* \* \* \*'/);
    const hourly = plan(400, '0 * * * *');
    expect(pullNightTooLong(hourly.plan, { schedule: hourly.p.schedule, now: NOW })).toBeNull();
  });

  it('scales the window with a time-scaled rate-limit minute, so the verdict does not change', () => {
    const { plan: pl } = agency();
    const r = pullNightTooLong(pl, { now: NOW, minuteMs: 1_000 });
    expect(r!.hours).toBeCloseTo(101_001 / 60 / 60, 3);
    expect(pullNightTooLong(plan(1000).plan, { now: NOW, minuteMs: 1_000 })).toBeNull();
  });
});

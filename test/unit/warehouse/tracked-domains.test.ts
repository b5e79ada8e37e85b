import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recordTrackedDomains, type Warehouse } from '../../../src/warehouse/index.js';
import { tempWarehouse } from './helpers.js';

const ROWS = `select pipeline, job, domain, first_seen_at::varchar as first, first_run_id, updated_at::varchar as updated, run_id from tracked_domains order by all`;

describe('recordTrackedDomains', () => {
  let wh: Warehouse;
  let done: () => Promise<void>;
  beforeEach(async () => ({ wh, done } = await tempWarehouse()));
  afterEach(async () => done());

  it('keeps each job\'s current list: first seen kept, new ones added, dropped ones removed, other pipelines untouched', async () => {
    const day1 = new Date('2026-11-20T03:00:00Z');
    const day2 = new Date('2026-11-21T03:00:00Z');
    await recordTrackedDomains(wh, { name: 'other', jobs: [{ name: 'serp-0', track_domains: ['x.com'] }] }, 'r0', day1);
    const n1 = await recordTrackedDomains(wh, { name: 'shop', jobs: [{ name: 'ranks', track_domains: ['Nike.com ', 'runnersworld.com'] }, { name: 'volumes' }] }, 'r1', day1);
    expect(n1).toBe(2);
    const n2 = await recordTrackedDomains(wh, { name: 'shop', jobs: [{ name: 'ranks', track_domains: ['nike.com', 'hoka.com', 'nike.com'] }] }, 'r2', day2);
    expect(n2).toBe(2);
    expect(await wh.all(ROWS)).toEqual([
      { pipeline: 'other', job: 'serp-0', domain: 'x.com', first: '2026-11-20 03:00:00+00', first_run_id: 'r0', updated: '2026-11-20 03:00:00+00', run_id: 'r0' },
      { pipeline: 'shop', job: 'ranks', domain: 'hoka.com', first: '2026-11-21 03:00:00+00', first_run_id: 'r2', updated: '2026-11-21 03:00:00+00', run_id: 'r2' },
      { pipeline: 'shop', job: 'ranks', domain: 'nike.com', first: '2026-11-20 03:00:00+00', first_run_id: 'r1', updated: '2026-11-21 03:00:00+00', run_id: 'r2' },
    ]);
    await recordTrackedDomains(wh, { name: 'shop', jobs: [{ name: 'ranks' }] }, 'r3', day2);
    expect((await wh.all<{ pipeline: string }>(ROWS)).map((r) => r.pipeline)).toEqual(['other']);
  });
});

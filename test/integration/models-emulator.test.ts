import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/index.js';
import { runModels } from '../../src/models/index.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { movingClock, silentLogger, tempDir } from './helpers.js';

describe('models over two nightly runs of pipelines/keywords.yaml against the emulator', () => {
  let sandbox: SandboxHandle;
  let wh: Awaited<ReturnType<typeof tempDir>>;
  let clock = movingClock('2026-11-20T09:00:00Z');
  const now = () => clock();

  const runOnce = async () => {
    const pipeline = await loadPipeline('pipelines/keywords.yaml');
    const s = await runPipeline({
      pipeline,
      file: 'pipelines/keywords.yaml',
      warehouseDir: wh.dir,
      baseUrl: sandbox.url,
      apiKey: 'svc_live_testmodels',
      logger: silentLogger,
      pollIntervalMs: 50,
      collectTimeoutMs: 30_000,
      now,
      models: false,
    });
    expect(s.state).toBe('completed');
  };

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 3, now, readyAfterMs: 50 });
    wh = await tempDir('pipeline-models-emu-');
    await runOnce();
  });
  afterAll(async () => {
    await sandbox.close();
    await wh.cleanup();
  });

  it('builds every model on real loads, all sidecar tests pass, and the next night builds incrementally', async () => {
    const first = await runModels({ warehouseDir: wh.dir, test: true });
    expect(first.builds.filter((b) => b.status === 'failed')).toEqual([]);
    expect(first.tests.filter((t) => t.status !== 'passed')).toEqual([]);
    expect(first.builds.find((b) => b.name === 'rank_history')).toMatchObject({ status: 'built', mode: 'full' });

    clock = movingClock('2026-11-21T09:00:00Z');
    await runOnce();
    const second = await runModels({ warehouseDir: wh.dir, test: true });
    expect(second.ok).toBe(true);
    expect(second.builds.find((b) => b.name === 'rank_history')).toMatchObject({ status: 'built', mode: 'incremental' });

    await withWarehouse(wh.dir, async (db) => {
      // Every domain of every organic page is tracked (paid results aside), not only track_domains.
      const [pages] = await db.all<{ served: number; tracked: number }>(`
        select (select count(*)::int from (select distinct i.task_id, regexp_replace(lower(i.domain), '^www\\.', '')
                                           from serp_items i where i.domain is not null and i.type <> 'paid')) as served,
               (select count(*)::int from rank_history where not is_lost) as tracked`);
      expect(pages!.tracked).toBe(pages!.served);
      const [days] = await db.all<{ n: number; carried: number }>(
        `select count(distinct check_date)::int as n, count(*) filter (where check_date = '2026-11-21' and previous_check_date = '2026-11-20')::int as carried from rank_history`,
      );
      expect(days!.n).toBe(2);
      expect(days!.carried).toBeGreaterThan(0);
      // The run recorded the SERP job's track_domains (and exported them); rank_history and
      // domain_visibility_daily flag exactly those domains, every other one is a competitor.
      expect(await db.all(`select pipeline, job, domain from tracked_domains order by domain`)).toEqual([
        { pipeline: 'keywords', job: 'running-shoes', domain: 'outdoorgearlab.com' },
        { pipeline: 'keywords', job: 'running-shoes', domain: 'runnersworld.com' },
      ]);
      expect(existsSync(join(wh.dir, 'parquet', 'tracked_domains'))).toBe(true);
      const flags = await db.all<{ listed: boolean; is_tracked: boolean }>(
        `select distinct domain in ('outdoorgearlab.com', 'runnersworld.com') as listed, is_tracked from rank_history order by all`,
      );
      expect(flags).toEqual([
        { listed: false, is_tracked: false },
        { listed: true, is_tracked: true },
      ]);
      const [vis] = await db.all<{ tracked: number; other: number }>(
        `select count(*) filter (where is_tracked)::int as tracked, count(*) filter (where not is_tracked)::int as other from domain_visibility_daily`,
      );
      expect(vis!.tracked).toBeGreaterThan(0);
      expect(vis!.other).toBeGreaterThan(vis!.tracked);
      // Spend adds up to the ledger to the last decimal.
      const [spend] = await db.all<{ a: string; b: string }>(
        `select (select sum(charge_cny) from spend_daily)::varchar as a, (select sum(charge_cny) from ledger)::varchar as b`,
      );
      expect(spend!.a).toBe(spend!.b);
      expect(Number(spend!.a)).toBeGreaterThan(0);
    });
  });
});

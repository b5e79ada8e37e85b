import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { Receiver } from './alerts-helpers.js';
import { movingClock, silentLogger, tempDir } from './helpers.js';

describe('alerts are a step of every run: pipeline run evaluates and delivers them after the models, once', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let receiver: Receiver;
  let sandbox: SandboxHandle;
  const now = movingClock('2026-11-20T03:00:00Z');

  beforeAll(async () => {
    tmp = await tempDir('run-alerts-');
    receiver = await Receiver.start();
    sandbox = await startSandbox({ seed: 4, now, readyAfterMs: 50 });
  });
  afterAll(async () => {
    await sandbox.close();
    await receiver.close();
    await tmp.cleanup();
  });

  it('a run that spends more than spend_over_cny sends one digest; a second run sends only its own alert, never the first again', async () => {
    const file = join(tmp.dir, 'spend.yaml');
    await writeFile(
      file,
      `name: spend
jobs:
  - kind: serp
    name: ranks
    depth: 10
    locations: [2840]
    keywords: [trail running shoes, road running shoes]
alerts:
  webhook: "\${ALERTS_WEBHOOK}"
  rules:
    - spend_over_cny: 0.0001
`,
    );
    const env = { ALERTS_WEBHOOK: `${receiver.url}/hook` };
    const pipeline = await loadPipeline(file, { env });
    const run = () =>
      runPipeline({
        pipeline,
        file,
        warehouseDir: join(tmp.dir, 'wh'),
        baseUrl: sandbox.url,
        apiKey: 'svc_live_testalerts02',
        logger: silentLogger,
        pollIntervalMs: 50,
        now,
        env,
      });
    const first = await run();
    expect(first.state).toBe('completed');
    expect(first.models?.ok).toBe(true);
    expect(first.alerts).toMatchObject({ status: 'done', created: 1, delivered: 1, pending: 0 });
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.body.alerts.map((a) => a.rule)).toEqual(['spend_over_cny']);
    // The alert row is in the warehouse and in the published Parquet, delivered.
    await withWarehouse(join(tmp.dir, 'wh'), async (wh) => {
      const rows = await wh.all<{ rule: string; n: number }>(`SELECT rule, count(*)::INT AS n FROM alerts GROUP BY rule`);
      expect(rows).toEqual([{ rule: 'spend_over_cny', n: 1 }]);
      const published = await wh.all<{ n: number }>(
        `SELECT count(*)::INT AS n FROM read_parquet('${join(tmp.dir, 'wh', 'parquet', 'alerts').replaceAll("'", "''")}/*/*.parquet')`,
      );
      expect(published).toEqual([{ n: 1 }]);
    });
    // A second run is a new run (its own spend alert), and the first alert is not sent again.
    const second = await run();
    expect(second.alerts).toMatchObject({ created: 1, delivered: 1 });
    expect(receiver.received).toHaveLength(2);
    expect(new Set(receiver.acknowledgedIds()).size).toBe(2);
  });
});

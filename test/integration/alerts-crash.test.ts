import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertStep } from '../../src/alerts/index.js';
import { loadPipeline, type LoadedPipeline } from '../../src/config/index.js';
import { withWarehouse, type Warehouse } from '../../src/warehouse/index.js';
import { insertScriptedCheck, Receiver, runNight, scriptedItems } from './alerts-helpers.js';
import { killWhenSaid, silentLogger, tempDir } from './helpers.js';

const CHILD = fileURLToPath(new URL('./alerts-kill-child.ts', import.meta.url));

describe('a SIGKILL between building the alerts and delivering them', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let receiver: Receiver;
  let pipeline: LoadedPipeline;
  let file: string;
  const env = () => ({ ALERTS_WEBHOOK: `${receiver.url}/hook` });
  const whDir = () => join(tmp.dir, 'wh');
  const withWh = <T>(fn: (wh: Warehouse) => Promise<T>) => withWarehouse(whDir(), fn);

  beforeAll(async () => {
    tmp = await tempDir('pipeline-alerts-crash-');
    receiver = await Receiver.start();
    file = join(tmp.dir, 'crash-shop.yaml');
    await writeFile(
      file,
      `name: crash-shop
jobs:
  - kind: serp
    name: ranks
    depth: 10
    locations: [2840]
    keywords: [trail running shoes]
    track_domains: [scripted.example]
alerts:
  webhook: "\${ALERTS_WEBHOOK}"
  rules:
    - leaves_top: 10
    - rank_drop: 3
    - spend_over_cny: 0.001
`,
    );
    pipeline = await loadPipeline(file, { env: env() });
  }, 60_000);
  afterAll(async () => {
    await receiver?.close();
    await tmp?.cleanup();
  });

  it('neither loses nor doubles an alert: the rows were committed pending, and the next step sends each once', async () => {
    const night = (date: string, rank: number) =>
      runNight({
        pipeline,
        warehouseDir: whDir(),
        date,
        logger: silentLogger,
        withWh,
        scripted: (wh, runId, at) =>
          insertScriptedCheck(wh, {
            pipeline: pipeline.name,
            job: 'ranks',
            runId,
            date,
            at,
            items: scriptedItems({ 'scripted.example': [rank, 'https://scripted.example/a'] }),
          }),
      });
    const first = await night('2026-04-01', 3);
    const one = await withWh((wh) =>
      alertStep({
        wh,
        pipeline,
        runId: first.summary.runId,
        runState: 'completed',
        stopReason: null,
        estimateCny: null,
        now: first.now,
        logger: silentLogger,
        env: env(),
      }),
    );
    expect(one).toMatchObject({ created: 1, delivered: 1 }); // the first night's spend

    const second = await night('2026-04-02', 14);
    // The child says it built the alerts, and is killed there (before it delivers them).
    const killed = await killWhenSaid(
      CHILD,
      [file, whDir(), second.summary.runId, second.now().toISOString()],
      { ...process.env, ...env() },
      'built',
    );
    expect(killed.said).toBe('built 3\n');
    expect(receiver.received).toHaveLength(1); // nothing of night 2 went out

    const stored = await withWh((wh) =>
      wh.all<{ rule: string; delivery_state: string; attempts: number }>(
        `select rule, delivery_state, attempts from alerts where run_id = ? order by rule`,
        [second.summary.runId],
      ),
    );
    expect(stored).toEqual([
      { rule: 'leaves_top', delivery_state: 'pending', attempts: 0 },
      { rule: 'rank_drop', delivery_state: 'pending', attempts: 0 },
      { rule: 'spend_over_cny', delivery_state: 'pending', attempts: 0 },
    ]);

    // The next step of the same run (a resume, or the next night): the same three, sent once.
    const again = await withWh((wh) =>
      alertStep({
        wh,
        pipeline,
        runId: second.summary.runId,
        runState: 'completed',
        stopReason: null,
        estimateCny: null,
        now: second.now,
        logger: silentLogger,
        env: env(),
      }),
    );
    expect(again).toMatchObject({ found: 3, created: 0, delivered: 3, pending: 0 });
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.body.alerts.map((a) => a.rule).sort()).toEqual(['leaves_top', 'rank_drop', 'spend_over_cny']);
    const ids = receiver.acknowledgedIds();
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(4);

    const twice = await withWh((wh) =>
      alertStep({
        wh,
        pipeline,
        runId: second.summary.runId,
        runState: 'completed',
        stopReason: null,
        estimateCny: null,
        now: second.now,
        logger: silentLogger,
        env: env(),
      }),
    );
    expect(twice).toMatchObject({ created: 0, delivered: 0 });
    expect(receiver.received).toHaveLength(2);
  });
});

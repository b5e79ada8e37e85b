import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertStep, type AlertOutcome, type StoredAlert } from '../../src/alerts/index.js';
import { loadPipeline, type LoadedPipeline } from '../../src/config/index.js';
import { buildReport } from '../../src/report/index.js';
import { withWarehouse, type Warehouse } from '../../src/warehouse/index.js';
import { insertScriptedCheck, Receiver, runNight, SCRIPTED_KEYWORD, scriptedItems } from './alerts-helpers.js';
import { tempDir } from './helpers.js';

const SECRET = 'alerts-secret-do-not-log-7f3a';
const TOKEN = 'T0KEN-in-the-webhook-path';
const NIGHTS = ['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05'] as const;

/**
 * The scripted keyword, night by night (the emulator makes the other checks): scripted.example
 * moves 3 → 4 → 12 → (failed check) → 2 with a new URL; fading.example ranks 7, 6, then is gone.
 */
const SCRIPT: Record<string, Record<string, [number, string]> | null> = {
  '2026-03-01': { 'scripted.example': [3, 'https://scripted.example/a'], 'fading.example': [7, 'https://fading.example/x'] },
  '2026-03-02': { 'scripted.example': [4, 'https://scripted.example/a'], 'fading.example': [6, 'https://fading.example/x'] },
  '2026-03-03': { 'scripted.example': [12, 'https://scripted.example/a/'] },
  '2026-03-04': null,
  '2026-03-05': { 'scripted.example': [2, 'https://scripted.example/b'] },
};

const pipelineYaml = `name: alerts-shop
schedule: "0 3 * * *"
timezone: UTC
jobs:
  - kind: serp
    name: ranks
    depth: 10
    locations: [2840]
    keywords: [best running shoes, trail running shoes, waterproof hiking boots]
    track_domains: [outdoorgearlab.com, scripted.example, fading.example]
alerts:
  webhook: "\${ALERTS_WEBHOOK}"
  secret_env: ALERTS_SECRET
  rules:
    - enters_top: 10
    - leaves_top: 10
    - rank_drop: 3
    - rank_gain: 3
    - lost: true
    - url_changed: true
    - spend_over_cny: 0.001
    - run_not_completed: true
    - missed_nights: 2
`;

describe('alerts over five nights of the emulator, delivered to a loopback receiver', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let receiver: Receiver;
  let pipeline: LoadedPipeline;
  let env: Record<string, string>;
  const logs: string[] = [];
  const logger = pino({ level: 'debug' }, new Writable({ write: (c, _e, done) => (logs.push(String(c)), done()) }));
  const outcomes: Record<string, AlertOutcome> = {};
  const runIds: Record<string, string> = {};
  /** POSTs received before each night's step. */
  const postsBefore: Record<string, number> = {};
  let failedKeywords: string[] = [];
  let rerun: AlertOutcome;
  const whDir = () => join(tmp.dir, 'wh');
  const withWh = <T>(fn: (wh: Warehouse) => Promise<T>) => withWarehouse(whDir(), fn);
  const alerts = () =>
    withWh((wh) =>
      wh.all<Record<string, unknown>>(
        `select *, strftime(check_date, '%Y-%m-%d') as day from alerts order by check_date, keyword, domain, rule`,
      ),
    );

  beforeAll(async () => {
    tmp = await tempDir('pipeline-alerts-');
    receiver = await Receiver.start();
    env = { ALERTS_WEBHOOK: `${receiver.url}/hook/${TOKEN}`, ALERTS_SECRET: SECRET };
    const file = join(tmp.dir, 'alerts-shop.yaml');
    await writeFile(file, pipelineYaml);
    pipeline = await loadPipeline(file, { env });
    // Night 2: the receiver fails once. Night 4: it never answers; the emulator fails one task.
    const answers: Record<string, 'fail' | 'hang'> = { '2026-03-02': 'fail', '2026-03-04': 'hang' };
    for (const date of NIGHTS) {
      const { summary, now } = await runNight({
        pipeline,
        warehouseDir: whDir(),
        date,
        logger,
        faults: date === '2026-03-04' ? 'taskFailure=0.4' : undefined,
        withWh,
        scripted: (wh, runId, at) =>
          insertScriptedCheck(wh, {
            pipeline: pipeline.name,
            job: 'ranks',
            runId,
            date,
            at,
            items: SCRIPT[date] ? scriptedItems(SCRIPT[date]!) : null,
          }),
      });
      runIds[date] = summary.runId;
      const answer = answers[date];
      if (answer) receiver.answerNext(answer);
      postsBefore[date] = receiver.received.length;
      outcomes[date] = await withWh((wh) =>
        alertStep({
          wh,
          pipeline,
          runId: summary.runId,
          runState: summary.state,
          stopReason: summary.stopReason,
          estimateCny: null,
          now,
          logger,
          env,
          timeoutMs: 1_500,
        }),
      );
    }
    failedKeywords = (
      await withWh((wh) =>
        wh.all<{ keyword: string }>(
          `select spec->>'keyword' as keyword from tasks where run_id = ? and state = 'failed' and spec is not null order by 1`,
          [runIds['2026-03-04']!],
        ),
      )
    ).map((r) => r.keyword);
    // A resumed or repeated step of the last night: nothing new, nothing sent again.
    rerun = await withWh((wh) =>
      alertStep({
        wh,
        pipeline,
        runId: runIds['2026-03-05']!,
        runState: 'completed',
        stopReason: null,
        estimateCny: null,
        now: () => new Date('2026-03-05T05:00:00Z'),
        logger,
        env,
      }),
    );
  }, 300_000);

  afterAll(async () => {
    await receiver?.close();
    await tmp?.cleanup();
  });

  it('makes the expected alerts for the scripted moves, "beyond N" for a domain gone, the gap marked, and nothing for a small move or a failed check', async () => {
    const rows = (await alerts()).filter((a) => a.keyword === SCRIPTED_KEYWORD);
    expect(rows.map((a) => [a.day, a.domain, a.rule, a.value_before, a.value_after, a.across_gap])).toEqual([
      ['2026-03-03', 'fading.example', 'leaves_top', '#6', 'beyond 20', false],
      ['2026-03-03', 'fading.example', 'lost', '#6', 'beyond 20', false],
      ['2026-03-03', 'fading.example', 'rank_drop', '#6', 'beyond 20', false],
      ['2026-03-03', 'scripted.example', 'leaves_top', '#4', '#12', false],
      ['2026-03-03', 'scripted.example', 'rank_drop', '#4', '#12', false],
      ['2026-03-05', 'scripted.example', 'enters_top', '#12', '#2', true],
      ['2026-03-05', 'scripted.example', 'rank_gain', '#12', '#2', true],
      ['2026-03-05', 'scripted.example', 'url_changed', 'https://scripted.example/a/', 'https://scripted.example/b', true],
    ]);
    const gain = rows.find((a) => a.rule === 'rank_gain')!;
    expect(gain.days_since_previous).toBe(2);
    expect(gain.message).toContain('across a gap: the previous check was 2 days earlier, on 2026-03-03');
    expect(String(rows.find((a) => a.rule === 'rank_drop' && a.domain === 'fading.example')!.message)).toContain('dropped 15+ places');
    expect(rows.some((a) => /→ 0\b|#0\b/.test(String(a.message)))).toBe(false);
    expect(rows.every((a) => a.run_id === runIds[String(a.day)])).toBe(true);
  });

  it('a failed check makes no lost alert: neither the scripted failure nor the tasks the emulator failed', async () => {
    // taskFailure=0.4 with this seed fails two of the three emulator tasks of night 4; one is collected.
    expect(failedKeywords.length).toBe(2);
    await withWh(async (wh) => {
      // The domain tracked on the failed keywords ranked the night before, so a naive diff would call it lost.
      const [before] = await wh.all<{ n: number }>(
        `select count(*)::int as n from rank_history where keyword in (?, ?) and check_date = '2026-03-03' and domain = 'outdoorgearlab.com' and not is_lost`,
        failedKeywords,
      );
      expect(before!.n).toBe(2);
      const [failedDay] = await wh.all<{ n: number }>(
        `select count(*)::int as n from rank_history where keyword in (?, ?, ?) and check_date = '2026-03-04'`,
        [...failedKeywords, SCRIPTED_KEYWORD],
      );
      expect(failedDay!.n).toBe(0);
    });
    const all = await alerts();
    expect(all.filter((a) => a.rule === 'lost' && a.day !== '2026-03-03')).toEqual([]);
    expect(all.filter((a) => a.day === '2026-03-04' && a.keyword !== null)).toEqual([]);
    // The night after, those series compare across the gap; whatever moved says so.
    expect(
      all.filter((a) => a.day === '2026-03-05' && failedKeywords.includes(String(a.keyword))).every((a) => a.across_gap === true),
    ).toBe(true);
    // The failed night's run still made its own (spend) alert, so the step did run.
    expect(all.filter((a) => a.day === '2026-03-04').map((a) => a.rule)).toEqual(['spend_over_cny']);
  });

  it('a receiver that fails once, or does not answer within the timeout, gets the alerts at the next run; every alert is delivered exactly once over five nights', async () => {
    expect(outcomes['2026-03-02']!.deliveryError).toMatch(/answered HTTP 500/);
    expect(outcomes['2026-03-02']!.pending).toBeGreaterThan(0);
    expect(outcomes['2026-03-04']!.deliveryError).toMatch(/did not answer within 1.5 s/);
    for (const date of ['2026-03-01', '2026-03-03', '2026-03-05'])
      expect(outcomes[date]).toMatchObject({ deliveryError: null, pending: 0 });

    const all = (await alerts()) as Array<Record<string, unknown> & { alert_id: string }>;
    const night2 = all.filter((a) => a.run_id === runIds['2026-03-02']).map((a) => a.alert_id);
    expect(night2.length).toBeGreaterThan(0);
    // Refused on night 2, in the first POST of night 3.
    const refused = receiver.received[postsBefore['2026-03-02']!]!;
    expect(refused.answer).toBe('fail');
    expect(refused.body.alerts.map((a) => a.id).sort()).toEqual([...night2].sort());
    const next = receiver.received[postsBefore['2026-03-03']!]!;
    expect(next.answer).toBe('ok');
    expect(next.body.alerts.map((a) => a.id)).toEqual(expect.arrayContaining(night2));
    const night4 = all.filter((a) => a.run_id === runIds['2026-03-04']).map((a) => a.alert_id);
    expect(receiver.received[postsBefore['2026-03-05']!]!.body.alerts.map((a) => a.id)).toEqual(expect.arrayContaining(night4));

    const acknowledged = receiver.acknowledgedIds();
    expect(new Set(acknowledged).size).toBe(acknowledged.length);
    expect([...acknowledged].sort()).toEqual(all.map((a) => a.alert_id).sort());
    expect(all.every((a) => a.delivery_state === 'delivered' && a.last_error === null)).toBe(true);
    expect(all.filter((a) => night2.includes(a.alert_id)).every((a) => a.attempts === 2)).toBe(true);
    // One spend alert per run (0.001 CNY is passed every night), never one per retry.
    expect(all.filter((a) => a.rule === 'spend_over_cny').map((a) => a.day)).toEqual([...NIGHTS]);
    // The same night's step again (a resume): nothing new, nothing sent.
    expect(rerun).toMatchObject({ status: 'done', created: 0, delivered: 0, pending: 0 });
    expect(rerun.found).toBeGreaterThan(0);
    expect(receiver.received.length).toBe(postsBefore['2026-03-05']! + 1);
  });

  it('posts one signed digest per run with Slack-style text, and never logs the secret or the webhook path', () => {
    const digest = receiver.received[postsBefore['2026-03-03']!]!;
    expect(digest.path).toBe(`/hook/${TOKEN}`);
    expect(digest.headers['content-type']).toMatch(/^application\/json/);
    expect(digest.headers['x-pipeline-signature']).toBe(`sha256=${createHmac('sha256', SECRET).update(digest.raw).digest('hex')}`);
    expect(digest.body.text).toMatch(/^:rotating_light: \[alerts-shop\] \d+ alerts\n• /);
    expect(digest.body.text).toContain('*scripted.example* left the top 10 for "scripted keyword"');
    expect(digest.body.alerts[0]).toHaveProperty('check_date');
    // One POST per night step that had something to send (night 2 and 4 refused, sent again later).
    expect(receiver.received.length).toBe(NIGHTS.length);
    const text = logs.join('');
    expect(text).toContain('alerts not delivered');
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(TOKEN);
  });

  it('pipeline alerts lists them with their delivery state, and the report shows the recent ones', async () => {
    const { stdout, code } = await new Promise<{ stdout: string; code: number }>((resolve) =>
      execFile(
        process.execPath,
        ['bin/pipeline.mjs', 'alerts', '--warehouse', whDir(), '--since', '2026-03-05', '--json'],
        { timeout: 120_000 },
        (err, out) => resolve({ stdout: out, code: err ? Number((err as { code?: number }).code ?? 1) : 0 }),
      ),
    );
    expect(code).toBe(0);
    const listed = JSON.parse(stdout) as StoredAlert[];
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.every((a) => a.checkDate >= '2026-03-05' || a.createdAt >= '2026-03-05')).toBe(true);
    expect(listed.find((a) => a.rule === 'url_changed')).toMatchObject({
      deliveryState: 'delivered',
      attempts: 1,
      pipeline: 'alerts-shop',
    });

    const out = join(tmp.dir, 'report.html');
    const report = await buildReport({ warehouseDir: whDir(), out });
    const all = await alerts();
    expect(report.counts.alerts).toBe(all.length);
    const { readFile } = await import('node:fs/promises');
    const html = await readFile(out, 'utf8');
    expect(html).toContain('id="sec-alerts"');
    expect(html).toContain('scripted.example entered the top 10');
  });
});

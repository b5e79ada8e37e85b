import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { AlertPayload } from '../../src/alerts/index.js';
import type { LoadedPipeline } from '../../src/config/index.js';
import { runModels } from '../../src/models/index.js';
import { runPipeline } from '../../src/run/index.js';
import type { RunSummary } from '../../src/run/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import type { Warehouse } from '../../src/warehouse/index.js';
import { insertPages, type ItemRow } from '../fixtures/models/serp-pages.js';
import { movingClock } from './helpers.js';

/** What the receiver does with the next POST: answer 200, answer 500, or never answer. */
export type Answer = 'ok' | 'fail' | 'hang';

export interface Received {
  body: AlertPayload;
  raw: string;
  headers: IncomingHttpHeaders;
  path: string;
  answer: Answer;
}

/**
 * A webhook receiver on 127.0.0.1: records every POST and answers from a script of
 * answers (200 once the script is used up).
 */
export class Receiver {
  readonly received: Received[] = [];
  private readonly script: Answer[] = [];
  private readonly hanging: ServerResponse[] = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<Receiver> {
    const server = createServer();
    const r = new Receiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const answer = r.script.shift() ?? 'ok';
        r.received.push({ body: JSON.parse(raw) as AlertPayload, raw, headers: req.headers, path: req.url ?? '', answer });
        if (answer === 'hang') return void r.hanging.push(res);
        res.writeHead(answer === 'ok' ? 200 : 500, { 'content-type': 'text/plain' }).end(answer === 'ok' ? 'ok' : 'receiver down');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return r;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The next POSTs get these answers, in order. */
  answerNext(...answers: Answer[]): void {
    this.script.push(...answers);
  }

  /** Ids of the alerts in POSTs answered 200. */
  acknowledgedIds(): string[] {
    return this.received.filter((r) => r.answer === 'ok').flatMap((r) => r.body.alerts.map((a) => a.id));
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A page of the scripted keyword: the given domains at their ranks, fillers elsewhere, `depth` deep. */
export function scriptedItems(placed: Record<string, [rank: number, url: string]>, size = 15): ItemRow[] {
  const byRank = new Map(Object.entries(placed).map(([domain, [rank, url]]) => [rank, [domain, url] as const]));
  return Array.from({ length: size }, (_, i) => {
    const rank = i + 1;
    const [domain, url] = byRank.get(rank) ?? [`filler${rank}.example`, `https://filler${rank}.example/page`];
    return [domain, 'organic', rank, rank, url] as const;
  });
}

export const SCRIPTED_KEYWORD = 'scripted keyword';

/**
 * The scripted keyword's check of one night, written as a collected task of the night's run
 * (the emulator makes the other checks): `items` null writes a failed task and no page.
 */
export async function insertScriptedCheck(
  wh: Warehouse,
  o: { pipeline: string; job: string; runId: string; date: string; at: Date; items: ItemRow[] | null },
): Promise<void> {
  if (o.items === null) {
    await wh.run(
      `insert into tasks (tag, run_id, pipeline, job, endpoint_id, task_id, state, status_code, status_message, planned_at, posted_at)
       values (?, ?, ?, ?, 'serp.engA.organic.task_post', ?, 'failed', 40103, 'scripted failure', ?::timestamptz, ?::timestamptz)`,
      [`tag-failed-${o.date}`, o.runId, o.pipeline, o.job, `failed-${o.date}`, o.at.toISOString(), o.at.toISOString()],
    );
    return;
  }
  await insertPages(wh, [
    { keyword: SCRIPTED_KEYWORD, date: o.date, depth: 20, job: { pipeline: o.pipeline, job: o.job }, items: o.items },
  ]);
  await wh.run(
    `update tasks set run_id = ?, collected_at = ?::timestamptz
     where task_id in (select task_id from serp_results where keyword = ? and check_date = ?::date)`,
    [o.runId, o.at.toISOString(), SCRIPTED_KEYWORD, o.date],
  );
}

/**
 * One night as the run sequence will order it: the emulator started at the night's date,
 * `runPipeline`, the scripted check, `runModels` (built and tested). The alert step is the
 * caller's, on the returned clock.
 */
export async function runNight(o: {
  pipeline: LoadedPipeline;
  warehouseDir: string;
  date: string;
  logger: Logger;
  faults?: string;
  scripted: (wh: Warehouse, runId: string, at: Date) => Promise<void>;
  withWh: <T>(fn: (wh: Warehouse) => Promise<T>) => Promise<T>;
}): Promise<{ summary: RunSummary; now: () => Date }> {
  const now = movingClock(`${o.date}T03:00:00Z`);
  const sandbox = await startSandbox({ seed: 11, now, readyAfterMs: 50, ...(o.faults ? { faults: o.faults } : {}) });
  let summary: RunSummary;
  try {
    summary = await runPipeline({
      pipeline: o.pipeline,
      file: o.pipeline.file,
      warehouseDir: o.warehouseDir,
      baseUrl: sandbox.url,
      apiKey: 'svc_live_testalerts01',
      logger: o.logger,
      pollIntervalMs: 50,
      collectTimeoutMs: 30_000,
      now,
      alerts: false,
    });
  } finally {
    await sandbox.close();
  }
  await o.withWh((wh) => o.scripted(wh, summary.runId, now()));
  const models = await runModels({ warehouseDir: o.warehouseDir, test: true });
  const broken = [
    ...models.builds.filter((b) => b.status === 'failed'),
    ...models.tests.filter((t) => t.status !== 'passed' && t.status !== 'skipped'),
  ];
  if (broken.length) throw new Error(`models of ${o.date} failed: ${JSON.stringify(broken)}`);
  return { summary, now };
}

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline, type ProgressEvent } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { readServiceReadings, withWarehouse, writeServiceReadings } from '../../src/warehouse/index.js';
import { pipelineCli, silentLogger, tempDir } from './helpers.js';

/**
 * Runs use what `pipeline doctor --probe` recorded (issue 44, item 5): under a service that
 * takes one task a `task_post` POST, a probed warehouse posts one task a POST from the start
 * (no 40006 refusals) and `pipeline plan` counts those POSTs and their time; without a record
 * nothing changes; an old record is named as old.
 */
const KEY = 'svc_live_testreadingsuse';
const KEYWORDS = ['alpha', 'beta', 'gamma', 'delta'];
const YAML = `name: perpost\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [${KEYWORDS.join(', ')}]\n`;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/**
 * The emulator serving one task a POST, behind a loopback relay that reads every `task_post`
 * answer: the task codes the service sent (40006 counted) and the tasks each POST carried.
 */
async function oneTaskService(): Promise<{ sb: SandboxHandle; url: string; posts: number[]; refused40006: () => number; dir: string }> {
  const sb = await startSandbox({ keys: [KEY], readyAfterMs: 0, readings: { asyncTasksPerPost: 1 } });
  const posts: number[] = [];
  const codes: number[] = [];
  const relay: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers = { ...req.headers };
      delete headers.host;
      delete headers.connection;
      void request(`${sb.url}${req.url}`, { method: req.method as 'GET', headers, body: body.length ? body : undefined }).then(
        async (r) => {
          const out = Buffer.from(await r.body.arrayBuffer());
          if (req.method === 'POST' && req.url?.includes('/task_post')) {
            posts.push((JSON.parse(body.toString('utf8')) as unknown[]).length);
            const env = JSON.parse(out.toString('utf8')) as { tasks?: { status_code: number }[] };
            for (const t of env.tasks ?? []) codes.push(t.status_code);
          }
          const h = { ...r.headers };
          delete h['content-length'];
          delete h['transfer-encoding'];
          delete h['content-encoding'];
          delete h.connection;
          res.writeHead(r.statusCode, h as Record<string, string>);
          res.end(out);
        },
        (err: Error) => {
          res.writeHead(502);
          res.end(err.message);
        },
      );
    });
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', () => r()));
  const tmp = await tempDir('pipeline-readings-use-');
  cleanups.push(
    () => sb.close(),
    () => new Promise<void>((r) => relay.close(() => r())),
    tmp.cleanup,
  );
  const url = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
  return { sb, url, posts, refused40006: () => codes.filter((c) => c === 40006).length, dir: join(tmp.dir, 'wh') };
}

/** `pipeline doctor --probe --yes` twice (the first has no price for a 2-task POST): the record says 1 a POST. */
async function probe(url: string, dir: string): Promise<void> {
  const env = { ...process.env, SVC_API_KEY: KEY, SVC_BASE_URL: url, PIPELINE_PROBE_POLL_MS: '50' };
  for (let i = 0; i < 2; i++) {
    const r = await pipelineCli(['doctor', '--probe', '--yes', '--json', '--warehouse', dir], env);
    expect(r.code, r.stderr).toBe(0);
  }
  expect((await readServiceReadings(dir))!.readings.asyncTasksPerPost.value).toBe(1);
}

async function night(url: string, dir: string, notes: string[]) {
  return runPipeline({
    pipeline: parsePipeline(YAML, 'perpost.yaml', {}),
    file: 'perpost.yaml',
    warehouseDir: dir,
    baseUrl: url,
    apiKey: KEY,
    logger: silentLogger,
    pollIntervalMs: 5,
    models: false,
    newRun: true,
    onProgress: (e: ProgressEvent) => {
      if (e.kind === 'note') notes.push(e.text);
    },
  });
}

describe('runs use the readings pipeline doctor --probe recorded', () => {
  it('after a probe finding one task a POST, a run posts one task a POST: no 40006, each task bought once', async () => {
    const s = await oneTaskService();
    await probe(s.url, s.dir);
    const before = s.posts.length;
    const refusedBefore = s.refused40006();
    const notes: string[] = [];
    const summary = await night(s.url, s.dir, notes);
    expect(summary.state).toBe('completed');
    expect(summary.tasks).toMatchObject({ planned: 4, posted: 4, collected: 4, failed: 0 });
    // Four POSTs of one task each, and not one task refused with 40006 by the service.
    expect(s.posts.slice(before)).toEqual([1, 1, 1, 1]);
    expect(s.refused40006() - refusedBefore).toBe(0);
    // The notes and the outcome say which readings the run followed, and from when.
    const rec = (await readServiceReadings(s.dir))!;
    expect(
      notes.some((n) => n.includes(`recorded by pipeline doctor --probe at ${rec.probedAt}`) && n.includes('asyncTasksPerPost=1')),
    ).toBe(true);
    expect(notes.some((n) => n.includes('refunds='))).toBe(true);
    expect(notes.some((n) => n.includes('are old'))).toBe(false);
    expect(summary.serviceReadings).toMatchObject({ probedAt: rec.probedAt, ageDays: 0, old: false, used: { asyncTasksPerPost: 1 } });
    // Each task created once by the service (never paid twice).
    await withWarehouse(s.dir, async (wh) => {
      const rows = await wh.all<{ n: number }>(`SELECT count(DISTINCT task_id)::INT AS n FROM tasks WHERE run_id = $1`, [summary.runId]);
      expect(rows[0]!.n).toBe(4);
    });
  });

  it('without a record a run is unchanged: it posts all four in one POST and shrinks after the 40006s', async () => {
    const s = await oneTaskService();
    const notes: string[] = [];
    const summary = await night(s.url, s.dir, notes);
    expect(summary.tasks).toMatchObject({ planned: 4, posted: 4, collected: 4, failed: 0 });
    expect(s.posts).toEqual([4, 1, 1, 1]);
    expect(s.refused40006()).toBe(3);
    expect(summary.serviceReadings).toBeUndefined();
    expect(notes.some((n) => n.includes('service readings'))).toBe(false);
  });

  it('pipeline plan counts one POST a task and its rate-limit time after the probe, and says the reading', async () => {
    const s = await oneTaskService();
    const file = join(s.dir, '..', 'perpost.yaml');
    await writeFile(file, YAML);
    const env = { ...process.env, SVC_API_KEY: KEY, SVC_BASE_URL: s.url };
    const plan = async () => {
      const r = await pipelineCli(['plan', file, '--json', '--warehouse', s.dir], env);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as { posts: number; minMinutes: number; readings?: string[]; families: { calls: number }[] };
    };
    const unprobed = await plan();
    // 1 POST + 4 task_get + 1 ready-list poll at 60 a minute.
    expect(unprobed).toMatchObject({ posts: 1, families: [{ calls: 6 }] });
    expect(unprobed.readings).toBeUndefined();
    await probe(s.url, s.dir);
    const probed = await plan();
    // 4 POSTs + 4 task_get + 1 poll: 9 calls, 9/60 minutes.
    expect(probed).toMatchObject({ posts: 4, families: [{ calls: 9 }] });
    expect(probed.minMinutes).toBeCloseTo(9 / 60, 6);
    expect(probed.readings!.join('\n')).toContain('asyncTasksPerPost=1');
    const text = await pipelineCli(['plan', file, '--warehouse', s.dir], env);
    expect(text.stdout).toContain('4 tasks in 4 POST(s)');
    expect(text.stdout).toContain('one task a task_post POST');
  });

  it('a record older than 30 days is named as old in the run notes, and still followed', async () => {
    const s = await oneTaskService();
    await probe(s.url, s.dir);
    const rec = (await readServiceReadings(s.dir))!;
    const probedAt = new Date(Date.now() - 45 * 86_400_000).toISOString();
    await writeServiceReadings(s.dir, { ...rec, probedAt });
    const before = s.posts.length;
    const notes: string[] = [];
    const summary = await night(s.url, s.dir, notes);
    expect(notes.some((n) => n.includes('are old (45 days, over 30)') && n.includes('pipeline doctor --probe --yes'))).toBe(true);
    expect(summary.serviceReadings).toMatchObject({ probedAt, ageDays: 45, old: true });
    expect(s.posts.slice(before)).toEqual([1, 1, 1, 1]);
    // pipeline status names the record, its age and that it is old.
    const status = await pipelineCli(['status', '--warehouse', s.dir], process.env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`service readings (pipeline doctor --probe, ${probedAt}, 45 day(s) ago: old`);
    expect(status.stdout).toContain('asyncTasksPerPost=1');
  });
});

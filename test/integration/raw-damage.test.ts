import { createReadStream, readFileSync } from 'node:fs';
import { cp, readdir, readFile, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pipeline } from 'node:stream/promises';
import { createGunzip, gunzipSync } from 'node:zlib';
import yargs from 'yargs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayCommand } from '../../src/cli/commands/replay.js';
import { loadPipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { reindexRaw, withWarehouse, type DamagedRawFile } from '../../src/warehouse/index.js';
import { killWhenSaid, movingClock, silentLogger, tempDir } from './helpers.js';

// Issue 43, findings 2 and 3: raw is the source of truth and is never silently damaged.

const DAY = '2026-11-20T09:00:00Z';
const DATA_TABLES = ['serp_results', 'serp_items', 'search_volume', 'search_volume_monthly'];
const ALL_TABLES = [...DATA_TABLES, 'tasks', 'ledger'];

/** `pipeline replay --json` in this process: its exit code, its JSON and what it wrote to stderr. */
async function replayCli(dir: string): Promise<{ code: number; out: ReplayOut; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  const writeErr = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((s: string) => (out.push(String(s)), true)) as typeof process.stdout.write;
  process.stderr.write = ((s: string) => (err.push(String(s)), true)) as typeof process.stderr.write;
  try {
    await yargs(['replay', '--warehouse', dir, '--json']).command(replayCommand).strict().parseAsync();
  } finally {
    process.stdout.write = write;
    process.stderr.write = writeErr;
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  return { code, out: JSON.parse(out.join('')) as ReplayOut, stderr: err.join('') };
}

interface ReplayOut {
  rows: Record<string, number>;
  skippedFiles: unknown[];
  damaged: { file: string; keptAs: string; salvaged: string | null; lostTasks: string[]; refetch: string[] }[];
  keptTasks: string[];
  notes: string[];
}

async function counts(dir: string, tables = ALL_TABLES): Promise<Record<string, number>> {
  return withWarehouse(dir, async (wh) => {
    const out: Record<string, number> = {};
    for (const t of tables) out[t] = (await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM ${t}`))[0]!.n;
    return out;
  });
}

/** Every landed file (name relative to raw/). */
async function rawFiles(dir: string): Promise<string[]> {
  return (await readdir(join(dir, 'raw'), { recursive: true })).filter((f) => f.includes('.ndjson.gz')).sort();
}

/** The task ids of the complete lines Node inflates from a (possibly cut) gzip NDJSON file before its first error. */
async function readableTaskIds(file: string): Promise<Set<string>> {
  let text = '';
  await pipeline(createReadStream(file), createGunzip(), async (src: AsyncIterable<Buffer>) => {
    for await (const b of src) text += b.toString('utf8');
  }).catch(() => {});
  const ids = new Set<string>();
  for (const line of text.split('\n').slice(0, -1)) {
    const l = JSON.parse(line) as { body: { tasks?: { id: string; status_code: number }[] } };
    for (const t of l.body.tasks ?? []) if (t.status_code === 20000) ids.add(t.id);
  }
  return ids;
}

describe('a compacted segment cut in half: replay rebuilds what it can read and keeps the other rows (loopback emulator)', () => {
  let sandbox: SandboxHandle;
  let wh: { dir: string; cleanup: () => Promise<void> };

  beforeAll(async () => {
    const now = movingClock(DAY);
    sandbox = await startSandbox({ seed: 43, now, readyAfterMs: 100 });
    wh = await tempDir('pipeline-rawdamage-');
    const pipelineFile = 'pipelines/keywords.yaml';
    const outcome = await runPipeline({
      pipeline: await loadPipeline(pipelineFile),
      file: pipelineFile,
      warehouseDir: wh.dir,
      baseUrl: sandbox.url,
      apiKey: 'svc_sandbox_demo',
      logger: silentLogger,
      pollIntervalMs: 50,
      collectTimeoutMs: 30_000,
      now,
    });
    expect(outcome.state).toBe('completed');
  });

  afterAll(async () => {
    await sandbox.close();
    await wh.cleanup();
  });

  it('(a) loads the readable answers, leaves the rows of the others as they were, names them, and exits 3', async () => {
    const before = await counts(wh.dir);
    const snapshot = await withWarehouse(wh.dir, (db) => Promise.all(DATA_TABLES.map((t) => db.all(`SELECT * FROM ${t} ORDER BY ALL`))));
    expect(before.serp_items).toBeGreaterThan(0);
    const segment = (await rawFiles(wh.dir)).find((f) => f.includes('/serp--') && f.includes('.seg-'))!;
    expect(segment).toBeDefined();
    const path = join(wh.dir, 'raw', segment);
    const allTasks = await readableTaskIds(path);
    await truncate(path, Math.floor((await stat(path)).size / 2));
    const readable = await readableTaskIds(path);
    const lost = [...allTasks].filter((t) => !readable.has(t)).sort();
    expect(readable.size).toBeGreaterThan(0);
    expect(lost.length).toBeGreaterThan(0);
    // The readable tasks' rows are dropped here: after the replay they must be back, rebuilt from raw.
    await withWarehouse(wh.dir, async (db) => {
      for (const t of ['serp_items', 'serp_results'])
        await db.run(`DELETE FROM ${t} WHERE task_id IN (${[...readable].map((id) => `'${id}'`).join(', ')})`);
    });
    const { code, out, stderr } = await replayCli(wh.dir);
    expect(code).toBe(3);
    // Every table holds what it held before, row for row: the readable tasks rebuilt, the others kept.
    expect(await counts(wh.dir)).toEqual(before);
    expect(out.keptTasks).toEqual(lost);
    expect(out.damaged).toHaveLength(1);
    expect(out.damaged[0]!.file).toBe(join('raw', segment));
    expect(out.damaged[0]!.keptAs).toBe(join('raw', `${segment}.damaged`));
    expect(out.damaged[0]!.lostTasks).toEqual(lost);
    expect(out.notes.join('\n')).toContain(lost[0]!);
    expect(out.notes.join('\n')).toContain(`${segment}.damaged`);
    expect(stderr).toBe(''); // --json: everything is in the JSON
    expect(await withWarehouse(wh.dir, (db) => Promise.all(DATA_TABLES.map((t) => db.all(`SELECT * FROM ${t} ORDER BY ALL`))))).toEqual(
      snapshot,
    );
    // The damaged file is kept apart, whole as it was cut; what could be read of it is a readable file.
    expect((await stat(join(wh.dir, 'raw', `${segment}.damaged`))).size).toBeGreaterThan(0);
    const salvaged = out.damaged[0]!.salvaged!;
    expect(await readableTaskIds(join(wh.dir, salvaged))).toEqual(readable);
    expect(await linesOf(join(wh.dir, salvaged))).toBe(readable.size);
    // The lost tasks are collected: they are put to be fetched again (free), never posted again.
    expect(out.damaged[0]!.refetch).toEqual(lost);
    // A second replay finds nothing damaged, rebuilds the same rows and still keeps the lost tasks' rows (no answer of theirs is readable).
    const again = await replayCli(wh.dir);
    expect(again.code).toBe(3);
    expect(again.out.damaged).toEqual([]);
    expect(again.out.keptTasks).toEqual(lost);
    expect(await counts(wh.dir)).toEqual(before);
  });
});

async function linesOf(file: string): Promise<number> {
  return (
    gunzipSync(await readFile(file))
      .toString()
      .split('\n').length - 1
  );
}

const CHILD = fileURLToPath(new URL('./raw-damage-kill-child.ts', import.meta.url));

describe('per-answer files damaged after a crash, before compaction (loopback emulator)', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  const whDir = () => join(tmp.dir, 'wh');
  const file = 'pipelines/keywords.yaml';
  let truncated: string[] = [];
  let postsAtKill = 0;

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 44, readyAfterMs: 100 });
    tmp = await tempDir('pipeline-rawdamage-kill-');
    await killWhenSaid(CHILD, [file, whDir(), sandbox.url, '16'], { ...process.env, SVC_API_KEY: 'svc_sandbox_demo' }, 'at ');
    postsAtKill = sandbox.log.filter((l) => l.path.endsWith('/task_post')).length;
    // The SERP answers landed one a file (the run was killed before it compacted them), cut in half.
    truncated = (await rawFiles(whDir())).filter((f) => f.includes('/serp--') && !f.includes('.seg-') && f.endsWith('.ndjson.gz'));
    for (const f of truncated) {
      const path = join(whDir(), 'raw', f);
      await truncate(path, Math.floor((await stat(path)).size / 2));
    }
    // Copies of the damaged warehouse for the replay and the reindex below.
    await cp(whDir(), join(tmp.dir, 'replay'), { recursive: true });
    await cp(whDir(), join(tmp.dir, 'reindex'), { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('(b) the rerun keeps them apart, fetches their tasks again (never posting), compacts only whole files, and the data ends complete', async () => {
    const collectedAtKill = await withWarehouse(whDir(), async (wh) => {
      const [r] = await wh.all<{ n: number; indexed: number }>(
        `SELECT (SELECT count(*) FROM tasks WHERE state = 'collected')::INT AS n,
                (SELECT count(DISTINCT file) FROM raw_responses WHERE kind = 'serp' AND file NOT LIKE '%.seg-%')::INT AS indexed`,
      );
      return r!;
    });
    // The case of finding 3: answers landed, indexed and loaded (their tasks collected), then damaged.
    expect(collectedAtKill.n).toBeGreaterThanOrEqual(16);
    expect(collectedAtKill.indexed).toBeGreaterThan(0);
    expect(truncated.length).toBeGreaterThan(0);

    const notes: string[] = [];
    const outcome = await runPipeline({
      pipeline: await loadPipeline(file),
      file,
      warehouseDir: whDir(),
      baseUrl: sandbox.url,
      apiKey: 'svc_sandbox_demo',
      logger: silentLogger,
      pollIntervalMs: 50,
      collectTimeoutMs: 30_000,
      onProgress: (e) => e.kind === 'note' && notes.push(e.text),
    });
    expect(outcome.resumed).toBe(true);
    expect(outcome.state).toBe('completed');
    // Nothing posted again: the damaged answers' tasks were fetched with task_get.
    expect(sandbox.log.filter((l) => l.path.endsWith('/task_post')).length).toBe(postsAtKill);
    const files = await rawFiles(whDir());
    // Every landed file the warehouse reads inflates whole: the night's segment holds no damage.
    for (const f of files.filter((x) => x.endsWith('.ndjson.gz')))
      expect(() => gunzipSync(readFileSync(join(whDir(), 'raw', f))), f).not.toThrow();
    // Each damaged file is kept apart under a name that says so, never deleted, and the run says which.
    for (const f of truncated) {
      expect(files).toContain(`${f}.damaged`);
      expect(notes.join('\n')).toContain(`${join('raw', f)} is damaged`);
    }
    const end = await withWarehouse(whDir(), async (wh) => {
      const [r] = await wh.all<{ tasks: number; collected: number; noRows: number; noRaw: number; open: number }>(
        `SELECT count(*)::INT AS tasks, count(*) FILTER (WHERE state = 'collected')::INT AS collected,
                count(*) FILTER (WHERE endpoint_id LIKE 'serp.%' AND task_id NOT IN (SELECT task_id FROM serp_results))::INT AS "noRows",
                count(*) FILTER (WHERE task_id NOT IN (SELECT unnest(task_ids) FROM raw_responses WHERE parsed))::INT AS "noRaw",
                (SELECT count(*) FROM task_refetches WHERE refetched_at IS NULL)::INT AS open
         FROM tasks`,
      );
      return r!;
    });
    // Their collected tasks were fetched again in this run, and the run said so.
    expect(notes.join('\n')).toMatch(/\d+ task\(s\) of damaged raw files fetched again and loaded/);
    // Every task collected, with its rows, and a readable answer of each in raw/: nothing left to fetch.
    expect(end).toEqual({ tasks: end.tasks, collected: end.tasks, noRows: 0, noRaw: 0, open: 0 });
    // Raw alone rebuilds the same tables.
    const before = await counts(whDir());
    const replayed = await replayCli(whDir());
    expect(replayed.out.damaged).toEqual([]);
    expect(replayed.code).toBe(0);
    expect(await counts(whDir())).toEqual(before);
  });

  it('(c) replay with the damaged per-answer files present does not crash, and keeps every row', async () => {
    const dir = join(tmp.dir, 'replay');
    const before = await counts(dir);
    const { code, out } = await replayCli(dir);
    // Every data row kept (the lost answers' tasks keep theirs); the ledger only gains the rows of
    // free reads the kill left unindexed, which the replay's reindex rebuilds from their files.
    const after = await counts(dir);
    expect({ ...after, ledger: 0 }).toEqual({ ...before, ledger: 0 });
    expect(after.ledger).toBeGreaterThanOrEqual(before.ledger!);
    expect(code).toBe(3);
    expect(out.damaged.map((d) => d.file).sort()).toEqual(truncated.map((f) => join('raw', f)).sort());
    expect(out.keptTasks.length).toBeGreaterThan(0);
  });

  it('(c) with the raw index lost, a reindex with the damaged per-answer files present keeps them apart and indexes the others', async () => {
    const lost = join(tmp.dir, 'reindex');
    await withWarehouse(lost, (wh) => wh.run('DELETE FROM raw_responses'));
    const damaged: DamagedRawFile[] = [];
    const n = await withWarehouse(lost, (wh) => reindexRaw(wh, undefined, { damaged }));
    expect(n).toBeGreaterThan(0);
    expect(damaged.map((d) => d.file).sort()).toEqual(truncated.map((f) => join('raw', f)).sort());
    const files = await rawFiles(lost);
    for (const f of truncated) expect(files).toContain(`${f}.damaged`);
  });
});

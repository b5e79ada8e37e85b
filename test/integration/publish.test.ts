import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { access, mkdir, readdir, rename } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/index.js';
import { EtlError, exitCodeFor, ExitCode } from '../../src/errors.js';
import { runModels } from '../../src/models/run-models.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { loadLanded, publish, replay, Warehouse, withWarehouse } from '../../src/warehouse/index.js';
import { publishedTables } from '../../src/warehouse/publish/published-tables.js';
import { silentLogger, tempDir } from './helpers.js';
import { tsChildArgs } from './ts-child.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHILD = join(ROOT, 'test/integration/publish-child.ts');
const DAY1 = '2026-11-20';
const DAY2 = '2026-11-21';

/** A clock whose day the test moves from night to night; it still ticks, so tasks progress. */
function nightClock(day: string) {
  const c = { base: Date.parse(`${day}T09:00:00Z`), t0: Date.now() };
  return {
    now: () => new Date(c.base + (Date.now() - c.t0)),
    to(d: string) {
      c.base = Date.parse(`${d}T09:00:00Z`);
      c.t0 = Date.now();
    },
  };
}

/** A child of publish-child.ts, with its stdout lines. */
function child(args: string[]): { p: ChildProcessWithoutNullStreams; line: (match?: RegExp) => Promise<string> } {
  const p = spawn(process.execPath, tsChildArgs(CHILD, args), { cwd: ROOT, stdio: 'pipe' });
  const lines: string[] = [];
  const waiters: (() => void)[] = [];
  let buf = '';
  let err = '';
  p.stderr.on('data', (d: Buffer) => (err += d.toString()));
  p.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      lines.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
      waiters.splice(0).forEach((w) => w());
    }
  });
  const line = async (match = /./) => {
    for (;;) {
      const k = lines.findIndex((l) => match.test(l));
      if (k >= 0) return lines.splice(0, k + 1).at(-1)!;
      if (p.exitCode !== null) throw new Error(`child exited ${p.exitCode}: ${err}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 200);
      });
    }
  };
  return { p, line };
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) out.push(relative(dir, join(e.parentPath, e.name)));
  return out.sort();
}

/**
 * What differs between the published layout and the tables: every published table's
 * files hold exactly its rows (multiset, both ways), each row in the partition of its own
 * date, and the folder holds exactly the manifest's files.
 */
async function differences(dir: string): Promise<string[]> {
  return withWarehouse(dir, async (wh) => {
    const bad: string[] = [];
    const manifest = (await wh.all<{ f: string }>(`SELECT file AS f FROM publish_files ORDER BY 1`)).map((r) => r.f);
    const disk = await filesUnder(wh.parquetDir);
    if (JSON.stringify(disk) !== JSON.stringify(manifest)) bad.push(`parquet/ holds ${disk.length} files, the manifest ${manifest.length}`);
    for (const t of await publishedTables(wh, DAY1)) {
      const files = (await wh.all<{ f: string }>(`SELECT file AS f FROM publish_files WHERE table_name = $1`, [t.name])).map(
        (r) => `'${join(wh.parquetDir, r.f)}'`,
      );
      const [{ n }] = (await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM "${t.name}"`)) as [{ n: number }];
      if (files.length === 0) {
        if (n > 0) bad.push(`${t.name}: ${n} rows, no file`);
        continue;
      }
      const cols = (
        await wh.all<{ c: string }>(
          `SELECT column_name AS c FROM duckdb_columns() WHERE table_name = $1 AND database_name = current_database() ORDER BY column_index`,
          [t.name],
        )
      )
        .map((r) => `"${r.c}"`)
        .join(', ');
      const pq = `read_parquet([${files.join(', ')}], hive_partitioning = true, union_by_name = true)`;
      const [d] = await wh.all<{ a: number; b: number }>(
        `SELECT (SELECT count(*) FROM (SELECT ${cols} FROM "${t.name}" EXCEPT ALL SELECT ${cols} FROM ${pq}))::INT AS a,
                (SELECT count(*) FROM (SELECT ${cols} FROM ${pq} EXCEPT ALL SELECT ${cols} FROM "${t.name}"))::INT AS b`,
      );
      if (d!.a || d!.b) bad.push(`${t.name}: ${d!.a} table rows not published, ${d!.b} published rows not in the table`);
      if (t.tracking !== 'whole') {
        const [w] = await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM ${pq} AS t WHERE (${t.parts.expr}) <> t."date"`);
        if (w!.n) bad.push(`${t.name}: ${w!.n} rows in another day's partition`);
      }
    }
    return bad;
  });
}

/** What a reader of the catalog at `path` counts, started in this process's folder (not the warehouse's), after `setup`. */
async function servingCounts(path: string, setup = ''): Promise<{ items: number; seq: number }> {
  const db = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY' });
  try {
    const c = await db.connect();
    if (setup) await c.run(setup);
    const r = await c.runAndReadAll(`SELECT (SELECT count(*) FROM serp_items)::INT AS items, (SELECT max(seq) FROM published)::INT AS seq`);
    c.closeSync();
    return r.getRowObjectsJS()[0] as { items: number; seq: number };
  } finally {
    db.closeSync();
  }
}

describe('publishing only what changed (real DuckDB, emulator on loopback)', () => {
  let sandbox: SandboxHandle;
  let wh: { dir: string; cleanup: () => Promise<void> };
  const clock = nightClock(DAY1);
  const night = async () => {
    const pipeline = await loadPipeline('pipelines/keywords.yaml');
    const s = await runPipeline({
      pipeline,
      file: 'pipelines/keywords.yaml',
      warehouseDir: wh.dir,
      baseUrl: sandbox.url,
      apiKey: 'svc_sandbox_demo',
      logger: silentLogger,
      pollIntervalMs: 50,
      collectTimeoutMs: 60_000,
      now: clock.now,
      models: false,
    });
    expect(s.state).toBe('completed');
    const models = await runModels({ warehouseDir: wh.dir });
    expect(models.builds.filter((b) => b.status === 'failed')).toEqual([]);
    // The run (models off here) published what it loaded; this publish, after the models as
    // the run sequence's own last step is, adds the marts, and its file lists are checked.
    return withWarehouse(wh.dir, (w) => publish(w, { now: clock.now }));
  };

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 5, now: clock.now, readyAfterMs: 100 });
    wh = await tempDir('pipeline-publish-');
  });
  afterAll(async () => {
    await sandbox.close();
    await wh.cleanup();
  });

  it('night 1: tables and marts published by their own date; the serving catalog opens from anywhere, also after the folder moved', async () => {
    // A file of an older full export that no manifest names: the first publish removes it.
    await withWarehouse(wh.dir, async (w) => {
      await mkdir(join(w.parquetDir, 'ledger', 'date=2020-01-01'), { recursive: true });
      await w.run(`COPY (SELECT * FROM ledger) TO '${join(w.parquetDir, 'ledger', 'date=2020-01-01', 'part-0.parquet')}' (FORMAT parquet)`);
    });
    const out = await night();
    expect(out.written.some((f) => f.startsWith('parquet/rank_history/date=2026-11-20/'))).toBe(true);
    expect(await differences(wh.dir)).toEqual([]);
    const [{ n }] = (await withWarehouse(wh.dir, (w) => w.all<{ n: number }>(`SELECT count(*)::INT AS n FROM serp_items`))) as [
      { n: number },
    ];
    expect(n).toBeGreaterThan(0);
    expect((await servingCounts(join(wh.dir, 'serving.duckdb'))).items).toBe(n);
    const moved = `${wh.dir}-moved`;
    await rename(wh.dir, moved);
    try {
      // The absolute paths name the old folder until the next publish; the relative views read from the new one.
      await expect(servingCounts(join(moved, 'serving.duckdb'))).rejects.toThrow(/No files found that match the pattern/);
      expect(
        (await servingCounts(join(moved, 'serving.duckdb'), `SET file_search_path = '${moved}'; SET search_path = 'relative,main'`)).items,
      ).toBe(n);
    } finally {
      await rename(moved, wh.dir);
    }
  });

  it('night 2: a reader holding the serving catalog through the run neither blocks it nor sees half of it; only the new day is written', async () => {
    const before = await servingCounts(join(wh.dir, 'serving.duckdb'));
    const dayOneFiles = await withWarehouse(wh.dir, (w) =>
      w.all<{ f: string }>(`SELECT file AS f FROM publish_files WHERE table_name = 'serp_items' ORDER BY 1`),
    );
    const reader = child(['reader', wh.dir]);
    try {
      await reader.line(/ready/);
      reader.p.stdin.write('count\n');
      expect(JSON.parse(await reader.line())).toMatchObject(before);
      clock.to(DAY2);
      const out = await night();
      // The reader still sees the catalog it opened, whole: the previous publish, every file readable.
      reader.p.stdin.write('count\n');
      expect(JSON.parse(await reader.line())).toMatchObject(before);
      expect(out.written.some((f) => f.startsWith(`parquet/rank_history/date=${DAY2}/`))).toBe(true);
      expect(out.written.some((f) => f.startsWith(`parquet/rank_history/date=${DAY1}/`))).toBe(false);
    } finally {
      reader.p.stdin.write('quit\n');
    }
    // Night 1's partition was not rewritten: its file is the same one.
    const now = await withWarehouse(wh.dir, (w) =>
      w.all<{ f: string }>(`SELECT file AS f FROM publish_files WHERE table_name = 'serp_items' ORDER BY 1`),
    );
    expect(now.filter((r) => r.f.includes(`date=${DAY1}`))).toEqual(dayOneFiles);
    expect(now.some((r) => r.f.includes(`date=${DAY2}`))).toBe(true);
    expect(await differences(wh.dir)).toEqual([]);
    const after = await servingCounts(join(wh.dir, 'serving.duckdb'));
    expect(after.items).toBeGreaterThan(before.items);
  });

  it('a reload of one task (a re-parse) rewrites only the partition it touches; a replay rewrites the tables it rebuilt', async () => {
    const out = await withWarehouse(wh.dir, async (w) => {
      const [task] = await w.all<{ id: string }>(`SELECT task_id AS id FROM serp_results WHERE check_date = DATE '${DAY1}' LIMIT 1`);
      await loadLanded(w, { taskIds: [task!.id] });
      return publish(w, { now: clock.now });
    });
    const serp = out.written.filter((f) => f.startsWith('parquet/serp_'));
    expect(serp.length).toBeGreaterThan(0);
    expect(serp.every((f) => f.includes(`date=${DAY1}`))).toBe(true);
    expect(out.removed.filter((f) => f.startsWith('parquet/serp_')).every((f) => f.includes(`date=${DAY1}`))).toBe(true);
    expect(await differences(wh.dir)).toEqual([]);

    await withWarehouse(wh.dir, async (w) => {
      await w.run(`DELETE FROM serp_items WHERE check_date = DATE '${DAY2}'`); // damage that only a replay repairs
      const r = await replay(w);
      await publish(w, { now: clock.now, rebuild: [...r.rows.keys()] });
    });
    expect(await differences(wh.dir)).toEqual([]);
  });

  it("a partition's file is written in row groups bounded by bytes (the memory of writing it), and holds the same rows", async () => {
    const bound = 256 << 10;
    const groups = await withWarehouse(wh.dir, async (w) => {
      await publish(w, { now: clock.now, rebuild: ['serp_items'], rowGroupBytes: bound });
      const files = await w.all<{ f: string; rows: number }>(
        `SELECT file AS f, rows FROM publish_files WHERE table_name = 'serp_items' ORDER BY 1`,
      );
      const out: { rows: number; groups: number; most: number }[] = [];
      for (const { f, rows } of files) {
        const [g] = await w.all<{ groups: number; most: number }>(
          `SELECT count(*)::INT AS groups, max(n)::INT AS most FROM (SELECT DISTINCT row_group_id, row_group_num_rows AS n FROM parquet_metadata('${join(w.parquetDir, f)}'))`,
        );
        out.push({ rows, ...g! });
      }
      return out;
    });
    expect(groups.length).toBe(2);
    for (const g of groups) {
      // a day of the emulator's SERP items is more than 256 KB in memory: several row groups,
      // each far below DuckDB's default of 122,880 rows
      expect(g.groups).toBeGreaterThan(1);
      expect(g.most).toBeLessThan(g.rows);
    }
    expect(await differences(wh.dir)).toEqual([]);
  });

  it('a column new to a table (a field never seen) reads in the serving catalog from every partition: null in the files written before it', async () => {
    const task = await withWarehouse(wh.dir, async (w) => {
      await w.run(`ALTER TABLE serp_items ADD COLUMN never_seen_feature VARCHAR`);
      const [t] = await w.all<{ id: string }>(`SELECT task_id AS id FROM serp_results WHERE check_date = DATE '${DAY2}' LIMIT 1`);
      await loadLanded(w, { taskIds: [t!.id] });
      await w.run(`UPDATE serp_items SET never_seen_feature = 'seen' WHERE task_id = $1`, [t!.id]);
      await publish(w, { now: clock.now });
      return t!.id;
    });
    expect(await differences(wh.dir)).toEqual([]);
    const [table] = await withWarehouse(wh.dir, (w) =>
      w.all<{ n: number; seen: number }>(`SELECT count(*)::INT AS n, count(*) FILTER (WHERE task_id = $1)::INT AS seen FROM serp_items`, [
        task,
      ]),
    );
    const db = await DuckDBInstance.create(join(wh.dir, 'serving.duckdb'), { access_mode: 'READ_ONLY' });
    try {
      const c = await db.connect();
      await c.run(`SET file_search_path = '${wh.dir}'`);
      const read = async (sql: string) => (await c.runAndReadAll(sql)).getRowObjectsJS();
      expect(
        await read(
          `SELECT count(*)::INT AS n, count(never_seen_feature)::INT AS seen, count(*) FILTER (WHERE "date" = DATE '${DAY1}')::INT AS old FROM serp_items`,
        ),
      ).toEqual([{ n: table!.n, seen: table!.seen, old: expect.any(Number) }]);
      expect(await read(`SELECT count(never_seen_feature)::INT AS n FROM serp_items WHERE "date" = DATE '${DAY1}'`)).toEqual([{ n: 0 }]);
      // Night 1's files (written before the column) and the new ones are two reads joined by name, not one read of every footer.
      const [view] = await read(`SELECT sql FROM duckdb_views() WHERE view_name = 'serp_items'`);
      expect(String(view!.sql)).toContain('UNION ALL BY NAME');
      expect(String(view!.sql)).not.toContain('union_by_name');
      c.closeSync();
    } finally {
      db.closeSync();
    }
    // A warehouse published before the columns were kept has them read once, at its next publish.
    const before = await servingCounts(join(wh.dir, 'serving.duckdb'));
    const schemas = `SELECT count(DISTINCT columns)::INT AS n FROM publish_files WHERE table_name = 'serp_items'`;
    await withWarehouse(wh.dir, async (w) => {
      expect(await w.all(schemas)).toEqual([{ n: 2 }]);
      await w.run(`UPDATE publish_files SET columns = NULL`);
      await publish(w, { now: clock.now });
      expect(await w.all(`SELECT count(*)::INT AS n FROM publish_files WHERE columns IS NULL`)).toEqual([{ n: 0 }]);
      expect(await w.all(schemas)).toEqual([{ n: 2 }]);
    });
    expect((await servingCounts(join(wh.dir, 'serving.duckdb'))).items).toBe(before.items);
  });

  it('killed with SIGKILL after committing, the layout stays as before for readers and the next publish finishes the job', async () => {
    await withWarehouse(wh.dir, async (w) => {
      const [task] = await w.all<{ id: string }>(`SELECT task_id AS id FROM serp_results WHERE check_date = DATE '${DAY2}' LIMIT 1`);
      await loadLanded(w, { taskIds: [task!.id] });
    });
    const before = await servingCounts(join(wh.dir, 'serving.duckdb'));
    const c = child(['publish', wh.dir, 'committed']);
    await c.line(/at committed/);
    c.p.kill('SIGKILL');
    await new Promise((r) => c.p.once('exit', r));
    // The committed publish's files are staged, not in place; the catalog is the previous one.
    expect(await servingCounts(join(wh.dir, 'serving.duckdb'))).toEqual(before);
    const out = await withWarehouse(wh.dir, async (w) => {
      expect((await w.all(`SELECT * FROM publish_journal`)).length).toBeGreaterThan(0);
      return publish(w, { now: clock.now });
    });
    expect(out.finished).toBe(before.seq + 1);
    expect(out.written.some((f) => f.includes(`date=${DAY2}`))).toBe(true);
    expect(await differences(wh.dir)).toEqual([]);
    await expect(access(join(wh.dir, '.publish'))).rejects.toThrow();
  });

  it('killed with SIGKILL after staging, nothing changed; the next publish does the whole job', async () => {
    await withWarehouse(wh.dir, async (w) => {
      const [task] = await w.all<{ id: string }>(`SELECT task_id AS id FROM serp_results WHERE check_date = DATE '${DAY1}' LIMIT 1`);
      await loadLanded(w, { taskIds: [task!.id] });
    });
    const c = child(['publish', wh.dir, 'staged']);
    await c.line(/at staged/);
    c.p.kill('SIGKILL');
    await new Promise((r) => c.p.once('exit', r));
    const out = await withWarehouse(wh.dir, async (w) => {
      expect(await w.all(`SELECT * FROM publish_journal`)).toEqual([]);
      return publish(w, { now: clock.now });
    });
    expect(out.finished).toBeUndefined();
    expect(out.written.some((f) => f.includes(`date=${DAY1}`))).toBe(true);
    expect(await differences(wh.dir)).toEqual([]);
  });

  it('pipeline export still rewrites everything, through the same path', async () => {
    const out = await withWarehouse(wh.dir, (w) => publish(w, { now: clock.now, rebuild: 'all' }));
    expect(out.removed.length).toBeGreaterThan(0);
    expect(await differences(wh.dir)).toEqual([]);
  });
});

describe('a held warehouse.duckdb', () => {
  it('is waited for, the holder named, then refused with exit code 7; a holder that lets go in time is waited out', async () => {
    const tmp = await tempDir('pipeline-lock-');
    try {
      await withWarehouse(tmp.dir, async () => {});
      const holder = child(['hold', tmp.dir]);
      await holder.line(/holding/);
      const said: string[] = [];
      const t0 = Date.now();
      process.env.PIPELINE_LOCK_WAIT_SECONDS = '1';
      const err = await Warehouse.open(tmp.dir, { onWait: (m) => said.push(m) }).then(
        (w) => (w.close(), undefined),
        (e: unknown) => e,
      );
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
      expect(err).toBeInstanceOf(EtlError);
      expect((err as EtlError).code).toBe('ETL_WAREHOUSE_LOCKED');
      expect(exitCodeFor(err)).toBe(ExitCode.warehouseLocked);
      expect(ExitCode.warehouseLocked).toBe(7);
      expect((err as Error).message).toContain(`PID ${holder.p.pid}`);
      expect(said.join('\n')).toContain(`PID ${holder.p.pid}`);

      process.env.PIPELINE_LOCK_WAIT_SECONDS = '30';
      setTimeout(() => holder.p.stdin.write('release\n'), 1500);
      const w = await Warehouse.open(tmp.dir, { onWait: () => {} });
      w.close();
    } finally {
      delete process.env.PIPELINE_LOCK_WAIT_SECONDS;
      await tmp.cleanup();
    }
  });
});

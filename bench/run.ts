// `npm run bench [-- --rows N] [-- --repeats R] [-- --only segment,files,reindexed,generic]` (default 50,000 SERP items, 7 pairs; 3 above 100,000 rows; `--rows 1000000` for the issue's
// figures). Each path runs in its own fresh process on a fresh copy, so its time and peak RSS are its own:
//   target   landed raw files → loadLanded (DuckDB read_json with explicit types + unnest) → committed rows, from one
//            compacted segment (landed by RawLanding, then compactRaw: as a reload or replay finds a past night);
//            `files` figures: the same rows from one file per response, as a night's loads find them before
//            compaction; `reindexed`: the segment indexed from the files alone (reindexRaw, after the database was
//            lost), with no raw_heads, so serp_results parses the bodies a second time
//   baseline DuckDB's own read_json with explicit columns over the same rows as flat NDJSON (gzip, as landed)
//   generic  the same for an endpoint with no declared schema (tables and columns from the bodies' shapes)
//   parquet  exportParquet of the loaded SERP items, after the load in the same process (its peak RSS is reported
//            apart: the load's peak RSS is taken before it)
// A pair runs the two paths back to back so both see the same machine; each figure is the median over the pairs, and
// every pair is printed (the spread). cpu is user+system seconds of the process during the timed part;
// load_cpu_ratio (and "cpu" beside the other ratios) is the same ratio in rows per CPU second.
// Figures, not assertions: tests check behaviour, this prints what it costs.
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { buildSerpResult } from '../src/sandbox/serp-result.js';
import {
  compactRaw,
  exportParquet,
  landedLine,
  loadLanded,
  RawLanding,
  reindexRaw,
  Warehouse,
  type RawResponse,
} from '../src/warehouse/index.js';

const argv = process.argv.slice(2);
const opt = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const at = new Date('2026-11-20T09:00:00Z');

function envelope(id: string, path: string, result: unknown, data: Record<string, unknown>): string {
  return JSON.stringify({
    version: '0.1',
    status_code: 20000,
    status_message: 'Ok.',
    time: '0.01 sec.',
    cost: 0,
    tasks_count: 1,
    tasks_error: 0,
    tasks: [
      {
        id,
        status_code: 20000,
        status_message: 'Ok.',
        time: '0.01 sec.',
        cost: 0,
        result_count: 1,
        path: path.split('/').filter(Boolean),
        data,
        result: [result],
      },
    ],
  });
}

/** Emulator SERPs for 64 keywords, reused (with their own task ids) so landing 1M items stays quick. */
const serpCache = new Map<number, { params: Record<string, unknown>; result: ReturnType<typeof buildSerpResult> }>();

function serpBody(i: number): { path: string; body: string; items: number } {
  let cached = serpCache.get(i % 64);
  if (!cached) {
    const params = {
      keyword: `keyword ${i % 64} running shoes`,
      location_code: 2840,
      language_code: 'en',
      device: 'desktop' as const,
      depth: 100,
    };
    cached = { params, result: buildSerpResult({ seed: 1, engine: 'engA', params, at }) };
    serpCache.set(i % 64, cached);
  }
  const { params, result } = cached;
  const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  const path = `/v3/serp/engA/organic/task_get/advanced/${id}`;
  return {
    path,
    body: envelope(id, path, result, { api: 'serp', function: 'task_get', se: 'engA', se_type: 'organic', ...params }),
    items: result.items.length,
  };
}

/** An endpoint with no declared schema: nested objects, scalar lists and a list of objects. */
function genericBody(i: number): { path: string; body: string; items: number } {
  const id = `00000000-0000-4000-9000-${String(i).padStart(12, '0')}`;
  const path = '/v3/backlinks/anchors/live';
  const items = Array.from({ length: 100 }, (_, k) => ({
    type: 'anchor',
    anchor: `anchor text ${i}-${k}`,
    rank: (i * 7 + k) % 1000,
    backlinks: k * 13,
    first_seen: '2026-01-02 03:04:05 +00:00',
    referring_domains: k + 1,
    is_lost: k % 9 === 0,
    backlinks_spam_score: k % 40,
    referring_links_tld: { com: k, org: k % 3 },
    referring_links_types: { anchor: k, image: 1 },
    attributes: k % 2 ? ['nofollow'] : [],
  }));
  return {
    path,
    body: envelope(
      id,
      path,
      { target: `site${i}.com`, mode: 'as_is', total_count: 100, items_count: 100, items },
      { api: 'backlinks', function: 'anchors', target: `site${i}.com` },
    ),
    items: 100,
  };
}

/**
 * Where the load finds the bodies:
 * - `segment`: landed by the landing (RawLanding, one file per response), then compacted
 *   into one segment per kind (compactRaw), as a reload or replay finds a past night;
 * - `files`: landed the same way and not compacted, as a night's loads find them;
 * - `reindexed`: the same segment written without the landing and indexed from the files
 *   alone (reindexRaw), as after the database was lost: no `raw_heads`, so the result-level
 *   tables parse the bodies a second time.
 */
type Layout = 'segment' | 'files' | 'reindexed';

/** Lands `rows` item rows in `layout`. */
async function landAll(
  root: string,
  rows: number,
  make: (i: number) => { path: string; body: string; items: number },
  layout: Layout,
): Promise<number> {
  const wh = await Warehouse.open(root);
  try {
    let items = 0;
    const files = new Set<string>();
    const landing = new RawLanding(wh, { runId: 'bench', pipeline: 'bench' });
    const landingNow: Promise<void>[] = [];
    for (let i = 0; items < rows; i++) {
      const b = make(i);
      const raw: RawResponse = {
        callId: `call-${String(i).padStart(8, '0')}`,
        receivedAt: at,
        method: 'GET',
        path: b.path,
        endpointId: 'bench',
        httpStatus: 200,
        charge: { requestId: null, chargeCny: '0', costUsd: '0', balanceCny: null },
        tasksSent: 0,
        body: b.body,
      };
      items += b.items;
      if (layout === 'files') await landing.land(raw);
      if (layout === 'segment') {
        // Landed in groups (the group commit writes a file of several members), as calls in
        // flight at once are; compacted into the same segment either way.
        landingNow.push(landing.land(raw));
        if (landingNow.length >= 64) await Promise.all(landingNow.splice(0));
      }
      if (layout !== 'reindexed') continue;
      const landed = landedLine(raw, { runId: 'bench', pipeline: 'bench' });
      const dir = join(root, 'raw', '2026-11-20');
      mkdirSync(dir, { recursive: true });
      const file = join(dir, `${landed.kind}--bench.seg-00000000.ndjson.gz`);
      appendFileSync(file, gzipSync(landed.line + '\n'));
      files.add(file);
    }
    await Promise.all(landingNow);
    if (layout === 'reindexed') await reindexRaw(wh, [...files]);
    if (layout === 'segment') await compactRaw(wh);
    return items;
  } finally {
    wh.close();
  }
}

interface ChildOut {
  rows: number;
  secs: number;
  cpuSecs: number;
  /** Of cpuSecs, the kernel's (system CPU): where a path's time has varied most from run to run. */
  sysSecs: number;
  rssMb: number;
  exportSecs?: number;
  exportRssMb?: number;
}

/** Runs one measured path in a fresh process. */
function child(mode: string, dir: string, table: string): ChildOut {
  const r = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!, '--child', mode, '--dir', dir, '--table', table], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  if (r.status !== 0) throw new Error(`bench child ${mode} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as ChildOut;
}

async function runChild(mode: string, dir: string, table: string): Promise<ChildOut> {
  const wh = await Warehouse.open(dir);
  try {
    const usage = () => process.resourceUsage();
    const t0 = performance.now();
    const u0 = usage();
    if (mode === 'load') {
      await loadLanded(wh, { all: true });
    } else {
      const cols = await wh.all<{ name: string; type: string }>(
        `SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position`,
        [table],
      );
      const spec = cols.map((c) => `"${c.name}": '${c.type}'`).join(', ');
      await wh.run(
        `INSERT INTO "${table}" SELECT * FROM read_json('${join(dir, 'flat.ndjson.gz')}', columns = {${spec}}, format = 'newline_delimited')`,
      );
    }
    const secs = (performance.now() - t0) / 1000;
    const u1 = usage();
    // Peak RSS of the load (or of read_json) alone: taken before the Parquet export below.
    const rssMb = u1.maxRSS / 1024;
    const cpuSecs = (u1.userCPUTime + u1.systemCPUTime - u0.userCPUTime - u0.systemCPUTime) / 1e6;
    const sysSecs = (u1.systemCPUTime - u0.systemCPUTime) / 1e6;
    const [{ n }] = (await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM "${table}"`)) as [{ n: number }];
    if (mode !== 'load') return { rows: n, secs, cpuSecs, sysSecs, rssMb };
    const p0 = performance.now();
    await exportParquet(wh, { tables: [table] });
    return {
      rows: n,
      secs,
      cpuSecs,
      sysSecs,
      rssMb,
      exportSecs: (performance.now() - p0) / 1000,
      exportRssMb: process.resourceUsage().maxRSS / 1024,
    };
  } finally {
    wh.close();
  }
}

/** The loaded table as flat NDJSON (its own columns), and a copy of the warehouse with it emptied. */
async function prepareBaseline(loaded: string, fresh: string, table: string): Promise<void> {
  const wh = await Warehouse.open(loaded);
  try {
    await wh.run(`COPY "${table}" TO '${join(fresh, 'flat.ndjson.gz')}' (FORMAT json, COMPRESSION gzip)`);
    await wh.run(`ATTACH '${join(fresh, 'warehouse.duckdb')}' AS fresh`);
    const [{ ddl }] = (await wh.all<{ ddl: string }>(
      `SELECT sql AS ddl FROM duckdb_tables() WHERE table_name = $1 AND database_name = 'warehouse'`,
      [table],
    )) as [{ ddl: string }];
    await wh.run(`USE fresh`);
    await wh.run(ddl.replace(/^CREATE TABLE/, 'CREATE OR REPLACE TABLE'));
  } finally {
    wh.close();
  }
}

// At the default size a single pair's ratio ranged from 0.61 to 1.13 on the shared 2-core machine, and
// the median of three moved with it: seven pairs (about 2.5 minutes) narrow it (medians of seven ranged
// 0.79 to 0.96 over nine runs of one day). A pair of a million rows takes minutes, and varies less.
const REPEATS = Number(opt('--repeats') ?? (Number(opt('--rows') ?? 50_000) > 100_000 ? 3 : 7));

interface Pair {
  load: ChildOut;
  base: ChildOut;
  ratio: number;
  rss: number;
}

/**
 * `REPEATS` pairs on fresh copies: each pair runs the two paths back to back (alternating
 * which goes first), so both see the same machine load; a figure is the median over the pairs
 * of the pair's own ratio.
 */
async function pairs(
  root: string,
  name: string,
  rows: number,
  table: string,
  make: (i: number) => { path: string; body: string; items: number },
  layout: Layout = 'segment',
): Promise<Pair[]> {
  const a = join(root, `${name}-landed`);
  const b = join(root, `${name}-flat`);
  mkdirSync(b, { recursive: true });
  await landAll(a, rows, make, layout);
  // One untimed load gives the table (a generic one exists only after it) and its rows.
  cpSync(a, `${a}-prep`, { recursive: true });
  child('load', `${a}-prep`, table);
  await prepareBaseline(`${a}-prep`, b, table);
  const out: Pair[] = [];
  for (let r = 0; r < REPEATS; r++) {
    cpSync(a, `${a}-${r}`, { recursive: true });
    cpSync(b, `${b}-${r}`, { recursive: true });
    // The copies (and what came before) written to disk before either path is timed, so the
    // kernel's writeback of them falls on neither.
    spawnSync('sync');
    const first = r % 2 === 0 ? 'load' : 'baseline';
    const x = child(first, first === 'load' ? `${a}-${r}` : `${b}-${r}`, table);
    const y = child(first === 'load' ? 'baseline' : 'load', first === 'load' ? `${b}-${r}` : `${a}-${r}`, table);
    const [load, base] = first === 'load' ? [x, y] : [y, x];
    if (load.rows !== base.rows) throw new Error(`bench: ${table} has ${load.rows} rows after the load, ${base.rows} after read_json`);
    out.push({ load, base, ratio: load.rows / load.secs / (base.rows / base.secs), rss: load.rssMb / base.rssMb });
    // The copies are removed with the root, after every path is measured (not here): on an ext4
    // without a journal (this machine's disk), a file created within a minute or more of many
    // deletions costs the kernel a scan past every recently deleted inode (find_inode_bit,
    // recently_deleted; 0.3 to 1.3 ms of system CPU a file here). The load creates its
    // scratch pieces (300 for a million generic items); read_json creates none. Removing a
    // pair's copies (10,000 files for the files layout) just before the next pair charged that
    // scan to the load path alone. At a million rows the copies kept take a few GB of the
    // temp folder until the end.
  }
  return out;
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

if (argv[0] === '--child') {
  process.stdout.write(JSON.stringify(await runChild(argv[1]!, opt('--dir')!, opt('--table')!)) + '\n');
} else {
  const rows = Number(opt('--rows') ?? 50_000);
  const root = await mkdtemp(join(tmpdir(), 'pipeline-bench-'));
  const loadAtStart = os.loadavg()[0]!;
  try {
    // `--only files,generic` measures only those paths (while iterating); the others print nothing.
    const only = opt('--only')?.split(',');
    const wanted = (name: string) => !only || only.includes(name);
    const serp = wanted('segment') ? await pairs(root, 'serp', rows, 'serp_items', serpBody) : [];
    const gen = wanted('generic') ? await pairs(root, 'generic', rows, 'backlinks_anchors__items', genericBody) : [];
    const files = wanted('files') ? await pairs(root, 'serp-files', rows, 'serp_items', serpBody, 'files') : [];
    const reindexed = wanted('reindexed') ? await pairs(root, 'serp-reindexed', rows, 'serp_items', serpBody, 'reindexed') : [];
    const rate = (x: ChildOut) => x.rows / x.secs;
    const fmt = (x: ChildOut) =>
      `${Math.round(rate(x)).toLocaleString('en-US').padStart(9)} rows/s  ${x.secs.toFixed(2).padStart(6)} s  cpu ${x.cpuSecs.toFixed(2).padStart(5)} s (sys ${x.sysSecs.toFixed(2)})  peak RSS ${Math.round(x.rssMb)} MB`;
    const spread = (xs: number[]) => `${median(xs).toFixed(2)} (pairs ${xs.map((x) => x.toFixed(2)).join(' ')})`;
    console.log(
      `warehouse load, ${((serp[0] ?? files[0] ?? reindexed[0])?.load.rows ?? 0).toLocaleString('en-US')} SERP items / ${(gen[0]?.load.rows ?? 0).toLocaleString('en-US')} generic items (Node ${process.version}; ${os.cpus().length} cores, load average ${loadAtStart.toFixed(1)} at the start, ${os.loadavg()[0]!.toFixed(1)} at the end; each run a fresh process on a fresh copy; ${REPEATS} pairs)`,
    );
    serp.forEach((p, i) => {
      console.log(`  pair ${i + 1}  read_json, explicit columns, flat NDJSON.gz (serp_items)    ${fmt(p.base)}`);
      console.log(
        `  pair ${i + 1}  landed raw → serp_results + serp_items (target path)         ${fmt(p.load)}  ratio ${p.ratio.toFixed(2)}  rss ${p.rss.toFixed(2)}  parquet ${p.load.exportSecs!.toFixed(2)} s (peak RSS with it ${Math.round(p.load.exportRssMb!)} MB)`,
      );
    });
    files.forEach((p, i) => {
      console.log(`  pair ${i + 1}  read_json, explicit columns, flat NDJSON.gz (serp_items)    ${fmt(p.base)}`);
      console.log(
        `  pair ${i + 1}  landed raw, one file per response → serp tables              ${fmt(p.load)}  ratio ${p.ratio.toFixed(2)}  rss ${p.rss.toFixed(2)}`,
      );
    });
    reindexed.forEach((p, i) => {
      console.log(`  pair ${i + 1}  read_json, explicit columns, flat NDJSON.gz (serp_items)    ${fmt(p.base)}`);
      console.log(
        `  pair ${i + 1}  reindexed segment (no raw_heads) → serp tables               ${fmt(p.load)}  ratio ${p.ratio.toFixed(2)}  rss ${p.rss.toFixed(2)}`,
      );
    });
    gen.forEach((p, i) => {
      console.log(`  pair ${i + 1}  read_json, explicit columns, flat NDJSON.gz (generic items) ${fmt(p.base)}`);
      console.log(
        `  pair ${i + 1}  landed raw → generic tables, no declared schema              ${fmt(p.load)}  ratio ${p.ratio.toFixed(2)}`,
      );
    });
    // Rows per CPU second (user + system) of the target path over the baseline's: under load the
    // baseline's wall time stretches more than ours, so the wall ratio alone can flatter or wrong us.
    const cpuRatio = (p: Pair) => p.load.rows / p.load.cpuSecs / (p.base.rows / p.base.cpuSecs);
    if (serp.length > 0) {
      console.log(`warehouse.load_ratio ${spread(serp.map((p) => p.ratio))}`);
      console.log(`warehouse.load_cpu_ratio ${spread(serp.map(cpuRatio))}`);
      console.log(`warehouse.rss_ratio ${spread(serp.map((p) => p.rss))}`);
    }
    if (files.length > 0) {
      console.log(`warehouse.files_load_ratio ${spread(files.map((p) => p.ratio))} cpu ${median(files.map(cpuRatio)).toFixed(2)}`);
      console.log(`warehouse.files_rss_ratio ${spread(files.map((p) => p.rss))}`);
    }
    if (reindexed.length > 0) {
      console.log(
        `warehouse.reindexed_load_ratio ${spread(reindexed.map((p) => p.ratio))} cpu ${median(reindexed.map(cpuRatio)).toFixed(2)}`,
      );
    }
    if (gen.length > 0)
      console.log(`warehouse.generic_load_ratio ${spread(gen.map((p) => p.ratio))} cpu ${median(gen.map(cpuRatio)).toFixed(2)}`);
    if (serp.length > 0) console.log(`warehouse.parquet_export_s ${spread(serp.map((p) => p.load.exportSecs!))}`);
  } finally {
    if (!process.env.BENCH_KEEP) await rm(root, { recursive: true, force: true });
    else console.log(root);
  }
}

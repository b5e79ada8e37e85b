import { spawnSync } from 'node:child_process';
import { rename } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/index.js';
import { DEFAULT_SQL_DIR, discoverModels, type Model } from '../../src/models/index.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { movingClock, silentLogger, tempDir } from './helpers.js';

const DUCKDB_API = pathToFileURL(createRequire(import.meta.url).resolve('@duckdb/node-api')).href;

/**
 * A BI reader in a child process started in `cwd`: opens `file` read-only, reads the catalog's
 * `published.open_with`, runs `setup` (statements, or none), then counts the rows of every view
 * of `schema` by its plain name. Prints one JSON line.
 */
function readerAt(
  cwd: string,
  file: string,
  setup = '',
  schema = 'main',
): { views: Record<string, number | string>; openWith: string; comments: Record<string, string | null> } {
  const code = `
    import { DuckDBInstance } from ${JSON.stringify(DUCKDB_API)};
    const instance = await DuckDBInstance.create(${JSON.stringify(file)}, { access_mode: 'READ_ONLY' });
    const db = await instance.connect();
    const rows = async (sql) => (await db.runAndReadAll(sql)).getRowObjectsJS();
    const out = { views: {}, comments: {} };
    out.openWith = (await rows('SELECT open_with FROM published'))[0].open_with;
    if (${JSON.stringify(setup)}) await db.run(${JSON.stringify(setup)});
    for (const v of await rows("SELECT view_name, comment FROM duckdb_views() WHERE NOT internal AND database_name = current_database() AND schema_name = '${schema}' ORDER BY 1")) {
      out.comments[v.view_name] = v.comment;
      try {
        out.views[v.view_name] = Number((await rows('SELECT count(*) AS n FROM "' + v.view_name + '"'))[0].n);
      } catch (err) {
        out.views[v.view_name] = String(err.message);
      }
    }
    process.stdout.write(JSON.stringify(out) + '\\n');
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd, encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`reader exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as ReturnType<typeof readerAt>;
}

describe('the marts as a BI reader sees them, after a night of pipelines/keywords.yaml against the emulator', () => {
  let sandbox: SandboxHandle;
  let wh: Awaited<ReturnType<typeof tempDir>>;
  let elsewhere: Awaited<ReturnType<typeof tempDir>>;
  let marts: Model[];
  const clock = movingClock('2026-11-20T09:00:00Z');

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 3, now: () => clock(), readyAfterMs: 50 });
    wh = await tempDir('pipeline-marts-docs-');
    elsewhere = await tempDir('pipeline-marts-reader-');
    const pipeline = await loadPipeline('pipelines/keywords.yaml');
    const s = await runPipeline({
      pipeline,
      file: 'pipelines/keywords.yaml',
      warehouseDir: wh.dir,
      baseUrl: sandbox.url,
      apiKey: 'svc_live_testmartsdocs',
      logger: silentLogger,
      pollIntervalMs: 50,
      collectTimeoutMs: 30_000,
      now: () => clock(),
    });
    expect(s.state).toBe('completed');
    marts = (await discoverModels(DEFAULT_SQL_DIR)).filter((m) => m.layer === 'marts');
  }, 240_000);
  afterAll(async () => {
    await sandbox?.close();
    await wh?.cleanup();
    await elsewhere?.cleanup();
  });

  it('every column of every mart, as built, is in its sidecar with its type and a description, in order', async () => {
    expect(marts.map((m) => m.name).sort()).toEqual([
      'domain_visibility_daily',
      'locations',
      'rank_history',
      'search_volume_trends',
      'share_of_serp_daily',
      'spend_daily',
    ]);
    const built = await withWarehouse(wh.dir, async (db) => {
      const out: Record<string, { name: string; type: string }[]> = {};
      for (const m of marts)
        out[m.name] = await db.all<{ name: string; type: string }>(
          `SELECT column_name AS name, column_type AS type FROM (DESCRIBE ${m.name})`,
        );
      return out;
    });
    for (const m of marts) {
      const documented = Object.entries(m.sidecar.columns ?? {}).map(([name, c]) => ({ name, type: c.type }));
      expect(documented, `sql/marts/${m.name}.yml columns`).toEqual(built[m.name]);
      for (const [name, c] of Object.entries(m.sidecar.columns ?? {}))
        expect(c.description.trim().length, `${m.name}.${name}`).toBeGreaterThan(10);
    }
  });

  it('ranks every domain the demo tracks, so the first report has a tracked line for each', async () => {
    const pipeline = await loadPipeline('pipelines/keywords.yaml');
    const tracked = pipeline.jobs.flatMap((j) => ('track_domains' in j ? (j.track_domains ?? []) : []));
    expect(tracked.length).toBeGreaterThan(0);
    const ranked = await withWarehouse(wh.dir, (db) =>
      db.all<{ domain: string; checks: number }>(
        `select domain, count(*)::int as checks from rank_history where is_tracked and rank_absolute is not null group by domain`,
      ),
    );
    for (const d of tracked) expect(ranked.find((r) => r.domain === d)?.checks ?? 0, d).toBeGreaterThan(0);
  });

  it('publishes locations: every location_code of the marts has a name and a country', async () => {
    await withWarehouse(wh.dir, async (db) => {
      const [n] = await db.all<{ codes: number; named: number }>(`
        select count(distinct r.location_code)::int as codes,
               count(distinct r.location_code) filter (where l.location_name is not null and l.country_name is not null)::int as named
        from (select location_code from rank_history union all select location_code from domain_visibility_daily) as r
        left join locations as l using (location_code)`);
      expect(n!.codes).toBeGreaterThan(0);
      expect(n!.named).toBe(n!.codes);
      expect(
        await db.all(
          `select location_code, location_name, country_name, country_iso_code, location_type from locations where location_code in (2840, 2826) order by 1`,
        ),
      ).toEqual([
        {
          location_code: 2826,
          location_name: 'United Kingdom',
          country_name: 'United Kingdom',
          country_iso_code: 'GB',
          location_type: 'Country',
        },
        {
          location_code: 2840,
          location_name: 'United States',
          country_name: 'United States',
          country_iso_code: 'US',
          location_type: 'Country',
        },
      ]);
      const [city] = await db.all<{ country_name: string }>(
        `select country_name from locations where location_type = 'City' and country_iso_code = 'GB' limit 1`,
      );
      expect(city?.country_name).toBe('United Kingdom');
    });
  });

  it('serving.duckdb opens from another folder as it is; moved, its relative views read after the statement the catalog gives', async () => {
    const file = `${wh.dir}/serving.duckdb`;
    const plain = readerAt(elsewhere.dir, file);
    expect(Object.keys(plain.views)).toEqual(
      expect.arrayContaining([
        'rank_history',
        'domain_visibility_daily',
        'share_of_serp_daily',
        'spend_daily',
        'search_volume_trends',
        'locations',
      ]),
    );
    for (const [view, n] of Object.entries(plain.views)) expect(typeof n, `${view}: ${n}`).toBe('number');
    expect(plain.views.rank_history).toBeGreaterThan(0);
    expect(plain.views.domain_visibility_daily).toBeGreaterThan(0);
    expect(plain.views.locations).toBeGreaterThan(0);
    // Each view says where it reads and what to do once the folder has moved.
    for (const [view, comment] of Object.entries(plain.comments)) {
      expect(comment, view).toContain(`absolute paths under ${wh.dir}`);
      expect(comment, view).toContain(`SET search_path = 'relative,main'`);
    }

    // The folder moved (or mounted at another path): the absolute paths fail until the next
    // publish there; the relative views read after the catalog's statement for the new folder.
    const moved = `${wh.dir}-moved`;
    await rename(wh.dir, moved);
    try {
      const stale = readerAt(elsewhere.dir, `${moved}/serving.duckdb`);
      expect(stale.views.rank_history).toMatch(/No files found that match the pattern/);
      // The catalog gives the statement for the folder it was published in; the reader names the new one.
      expect(stale.openWith).toBe(`SET file_search_path = '${wh.dir}'; SET search_path = 'relative,main'`);
      const fixed = readerAt(elsewhere.dir, `${moved}/serving.duckdb`, stale.openWith.replace(wh.dir, moved));
      expect(fixed.views).toEqual(plain.views);
      // Started in the folder itself, the relative views need no file_search_path.
      expect(readerAt(moved, `${moved}/serving.duckdb`, `SET search_path = 'relative,main'`, 'relative').views).toEqual(plain.views);
    } finally {
      await rename(moved, wh.dir);
    }
  });
});

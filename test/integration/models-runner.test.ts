import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import yargs from 'yargs';
import { modelsCommand } from '../../src/cli/commands/models.js';
import { buildModels, discoverModels, testModels } from '../../src/models/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { tempDir } from './helpers.js';

const PROJECT = fileURLToPath(new URL('../fixtures/models/project', import.meta.url));

async function seed(dir: string): Promise<void> {
  await withWarehouse(dir, async (wh) => {
    await wh.run(`create table things (id varchar, name varchar, colour varchar)`);
    await wh.run(
      `insert into things values ('1', 'A', 'red'), ('2', 'B', 'blue'), ('3', 'C', 'green'), ('4', 'D', 'red'), ('5', 'E', null)`,
    );
    await wh.run(`create table colours as select * from (values ('red'), ('blue')) t(colour)`);
  });
}

describe('model runner on a small project', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    tmp = await tempDir('pipeline-models-runner-');
    await seed(tmp.dir);
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    process.exitCode = undefined;
    await tmp.cleanup();
  });

  it('finds dependencies in the SQL (not in comments) and builds in that order', async () => {
    const models = await discoverModels(PROJECT);
    const deps = Object.fromEntries(models.map((m) => [m.name, m.dependsOn]));
    expect(deps).toMatchObject({ colour_counts: ['stg_shop__things'], absent_summary: ['stg_shop__absent'], stg_shop__things: [] });
    expect(models.find((m) => m.name === 'stg_shop__things')!.materialized).toBe('view');
    expect(models.find((m) => m.name === 'colour_counts')!.materialized).toBe('table');
  });

  it('skips a model whose source is absent, and its downstream; fails one whose source lacks a declared column; builds the rest', async () => {
    const models = await discoverModels(PROJECT);
    const builds = await withWarehouse(tmp.dir, (wh) => buildModels(wh, models));
    const by = Object.fromEntries(builds.map((b) => [b.name, b]));
    expect(by.stg_shop__absent).toMatchObject({ status: 'skipped' });
    expect(by.stg_shop__absent!.message).toMatch(/source table absent_source is not in the warehouse/);
    expect(by.absent_summary).toMatchObject({ status: 'skipped', message: 'upstream model stg_shop__absent was skipped' });
    expect(by.stg_shop__wrong_columns).toMatchObject({ status: 'failed' });
    expect(by.stg_shop__wrong_columns!.message).toMatch(/lacks column\(s\) missing_col/);
    expect(by.colour_counts).toMatchObject({ status: 'built', rows: 4 });
    expect(builds.findIndex((b) => b.name === 'stg_shop__things')).toBeLessThan(builds.findIndex((b) => b.name === 'colour_counts'));
  });

  it('reports each failing test with the model, the test and the offending rows', async () => {
    const models = await discoverModels(PROJECT);
    const results = await withWarehouse(tmp.dir, async (wh) => {
      await buildModels(wh, models);
      return testModels(wh, models);
    });
    const of = (test: string) => results.find((r) => r.model === 'colour_counts' && r.test === test);
    expect(of('unique(colour)')).toMatchObject({ status: 'passed', failures: 0 });
    expect(of('not_null(colour)')).toMatchObject({ status: 'failed', failures: 1, sample: [{ colour: null, things: 1n }] });
    expect(of('accepted_values(colour)')).toMatchObject({ status: 'failed', failures: 1, sample: [{ colour: 'green', rows: 1n }] });
    expect(of('relationships(colour -> colours.colour)')).toMatchObject({ status: 'failed', failures: 1, sample: [{ colour: 'green' }] });
    expect(of('one thing per colour')).toMatchObject({ status: 'failed', failures: 1, sample: [{ colour: 'red', things: 2n }] });
    expect(results.find((r) => r.model === 'absent_summary')).toMatchObject({ status: 'skipped' });
  });

  it('`pipeline models test` exits non-zero and prints model, test and rows', async () => {
    let out = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => {
      out += String(s);
      return true;
    });
    await yargs(['models', 'run', '--warehouse', tmp.dir, '--sql', PROJECT]).command(modelsCommand).strict().parseAsync();
    expect(process.exitCode).toBe(1);
    expect(out).toMatch(/built\s+colour_counts\s+table\s+4 rows/);
    expect(out).toMatch(/skipped\s+stg_shop__absent/);
    expect(out).toMatch(/FAILED\s+colour_counts: accepted_values\(colour\)/);
    // What it built is published for BI tools, as a run's last step does.
    expect(out).toMatch(/published \d+ files \(0 replaced or removed\); serving.duckdb is publish 1\n/);
    expect(existsSync(join(tmp.dir, 'serving.duckdb'))).toBe(true);
    out = '';
    await yargs(['models', 'run', '--no-publish', '--warehouse', tmp.dir, '--sql', PROJECT]).command(modelsCommand).strict().parseAsync();
    expect(out).toMatch(/built\s+colour_counts/);
    expect(out).not.toMatch(/published/);
    out = '';
    await yargs(['models', 'test', '--warehouse', tmp.dir, '--sql', PROJECT]).command(modelsCommand).strict().parseAsync();
    expect(process.exitCode).toBe(1);
    expect(out).toMatch(/FAILED\s+colour_counts: one thing per colour\s+\(1 offending rows\)\n\s+\{"colour":"red","things":2\}/);
    expect(out).toMatch(/PASSED\s+colour_counts: unique\(colour\)/);
  });
});

describe('an incremental model with strategy delete_insert', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    tmp = await tempDir('pipeline-models-delete-insert-');
  });
  afterEach(async () => tmp.cleanup());

  async function project(strategy: string): Promise<string> {
    const dir = join(tmp.dir, 'sql');
    await mkdir(join(dir, 'marts'), { recursive: true });
    await writeFile(
      join(dir, 'marts', 'daily.sql'),
      'select d, sum(v) as total, count(*) as n from facts\n{% if is_incremental %}where d >= {{ incremental_since }}{% endif %}\ngroup by d\n',
    );
    await writeFile(
      join(dir, 'marts', 'daily.yml'),
      `grain: one row per day\nmaterialized: incremental\nincremental:\n  key: d\n  strategy: ${strategy}\n`,
    );
    return dir;
  }

  it('deletes from the last built day and inserts the rebuilt days, as a full build would have them', async () => {
    const models = await discoverModels(await project('delete_insert'));
    expect(models[0]!.sidecar.incremental).toEqual({ key: 'd', strategy: 'delete_insert' });
    const wh = join(tmp.dir, 'wh');
    await withWarehouse(wh, async (w) => {
      await w.run(`create table facts (d date, v integer)`);
      await w.run(`insert into facts values ('2026-01-01', 1), ('2026-01-02', 2), ('2026-01-03', 3)`);
      expect(await buildModels(w, models)).toMatchObject([{ status: 'built', mode: 'full', rows: 3 }]);
      // A later row of the last built day, and a new day: the build starts at the last built day.
      await w.run(`insert into facts values ('2026-01-03', 30), ('2026-01-04', 4)`);
      const [inc] = await buildModels(w, models);
      expect(inc).toMatchObject({ status: 'built', mode: 'incremental', rows: 2 });
      expect(inc!.since).toContain('2026-01-03');
      const after = await w.all(`select d::varchar as d, total::int as total, n::int as n from daily order by d`);
      await buildModels(w, models, { fullRefresh: true });
      expect(await w.all(`select d::varchar as d, total::int as total, n::int as n from daily order by d`)).toEqual(after);
      expect(after).toEqual([
        { d: '2026-01-01', total: 1, n: 1 },
        { d: '2026-01-02', total: 2, n: 1 },
        { d: '2026-01-03', total: 33, n: 2 },
        { d: '2026-01-04', total: 4, n: 1 },
      ]);
    });
  });

  it('refuses a strategy it does not know, naming the field', async () => {
    await expect(discoverModels(await project('merge'))).rejects.toThrow(/incremental\.strategy/);
  });
});

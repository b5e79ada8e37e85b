import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/index.js';
import { ExitCode, exitCodeFor } from '../../src/errors.js';
import { runClusters } from '../../src/run/cluster-run.js';
import { runModels } from '../../src/models/index.js';
import { buildReport, type BuildReportResult } from '../../src/report/index.js';
import { SYNTHETIC_PIPELINE, SYNTHETIC_TRACKED, writeSyntheticWarehouse } from '../../bench/lib/synthetic-warehouse.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { Warehouse, withWarehouse } from '../../src/warehouse/index.js';
import { launchChromium } from './headless-chromium.js';
import { movingClock, silentLogger, tempDir } from './helpers.js';

const ARTIFACTS = 'test/artifacts';
const DAYS = ['2026-11-18', '2026-11-19', '2026-11-20'];

interface ChartSeries {
  label: string;
  points: number;
  drawn: number;
  data: unknown[];
}
type Charts = Record<string, { type: string; labels: number; series: ChartSeries[] }>;

/** Opens the report from disk, recording console errors, page errors and any request that is not the file itself. */
async function open(browser: Browser, file: string): Promise<{ page: Page; errors: string[]; external: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors: string[] = [];
  const external: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('request', (r) => !r.url().startsWith('file:') && external.push(r.url()));
  await page.goto(pathToFileURL(file).href);
  await page.waitForFunction(() => (globalThis as unknown as { __report?: { ready: boolean } }).__report?.ready === true, undefined, {
    timeout: 15_000,
  });
  return { page, errors, external };
}

const charts = (page: Page): Promise<Charts> =>
  page.evaluate(() => (globalThis as unknown as { __report: { charts: () => Charts } }).__report.charts());
const options = (page: Page, id: string): Promise<string[]> => page.$$eval(`#${id} option`, (os) => os.map((o) => o.textContent ?? ''));
const sum = (xs: readonly unknown[]) => xs.reduce<number>((t, x) => t + (typeof x === 'number' ? x : 0), 0);

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/pipeline.mjs', ...args], { timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err ? (err as { code?: number }).code : 0;
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
    });
  });
}

describe('pipeline report from three nights of the emulator, opened in headless Chromium', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let sandbox: SandboxHandle;
  let browser: Browser;
  let report: BuildReportResult;
  let clock = movingClock(`${DAYS[0]}T09:00:00Z`);
  const now = () => clock();
  let tracked: Set<string>;
  let warehouseDir: string;

  beforeAll(async () => {
    tmp = await tempDir('pipeline-report-');
    warehouseDir = join(tmp.dir, 'wh');
    sandbox = await startSandbox({ seed: 3, now, readyAfterMs: 50 });
    const pipeline = await loadPipeline('pipelines/keywords.yaml');
    for (const day of DAYS) {
      clock = movingClock(`${day}T09:00:00Z`);
      const s = await runPipeline({
        pipeline,
        file: 'pipelines/keywords.yaml',
        warehouseDir,
        baseUrl: sandbox.url,
        apiKey: 'svc_live_testreport',
        logger: silentLogger,
        pollIntervalMs: 50,
        collectTimeoutMs: 30_000,
        now,
      });
      expect(s.state).toBe('completed');
    }
    await runClusters({ warehouseDir, baseUrl: sandbox.url, apiKey: 'svc_live_testreport', now });
    const models = await runModels({ warehouseDir, test: true });
    expect(models.ok).toBe(true);
    tracked = new Set(pipeline.jobs.flatMap((j) => (j.kind === 'serp' ? (j.track_domains ?? []) : [])));
    report = await buildReport({ warehouseDir, out: join(tmp.dir, 'report.html'), pipelineFiles: ['pipelines/keywords.yaml'] });
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await sandbox?.close();
    await tmp?.cleanup();
  });

  it('opens without network or console errors and each chart draws the series and points the models hold', async () => {
    const { page, errors, external } = await open(browser, report.out);
    await page.selectOption('#rank-keyword', { label: 'best running shoes — United States' });
    const c = await charts(page);

    const facts = await withWarehouse(warehouseDir, async (wh) => ({
      rank: await wh.all<{ domain: string; d: string; rank: number }>(
        `select domain, strftime(check_date, '%Y-%m-%d') as d, rank_absolute as rank from rank_history
         where keyword = 'best running shoes' and location_code = 2840 and not is_lost`,
      ),
      visibilityTop: await wh.all<{ domain: string }>(
        `select domain from domain_visibility_daily group by domain order by sum(visibility) desc, domain limit 8`,
      ),
      visibilityDomains: await wh.all<{ domain: string }>(`select distinct domain from domain_visibility_daily`),
      runnersworld: await wh.all<{ d: string; pct: number }>(
        `select strftime(check_date, '%Y-%m-%d') as d, 100 * sum(visibility_pct * keywords_checked) / sum(keywords_checked) as pct
         from domain_visibility_daily where domain = 'runnersworld.com' group by all order by d`,
      ),
      dates: (await wh.all<{ n: number }>(`select count(distinct check_date)::int as n from rank_history`))[0]!.n,
      spend: (
        await wh.all<{ endpoints: number; days: number; cny: number }>(
          `select count(distinct endpoint_id) filter (where charge_cny <> 0)::int as endpoints, count(distinct call_date)::int as days, sum(charge_cny)::double as cny from spend_daily`,
        )
      )[0]!,
      volumeMonths: await wh.all<{ m: string; v: number }>(
        `select strftime(month_start, '%Y-%m') as m, sum(search_volume)::double as v from search_volume_trends group by all order by m`,
      ),
      volumeKeywords: (await wh.all<{ n: number }>(`select count(distinct keyword)::int as n from search_volume_trends`))[0]!.n,
      calendarMonths: (await wh.all<{ n: number }>(`select count(distinct month(month_start))::int as n from search_volume_trends`))[0]!.n,
      clusters: (await wh.all<{ n: number }>(`select count(*)::int as n from keyword_cluster_summary`))[0]!.n,
      clustered: (await wh.all<{ n: number }>(`select count(*)::int as n from keyword_clusters`))[0]!.n,
    }));

    // Rank: the tracked domains that ranked, then the three untracked domains whose mean rank is closest to the best tracked one's.
    const dates = [...new Set(facts.rank.map((r) => r.d))].sort();
    const byDomain = new Map<string, Map<string, number>>();
    for (const r of facts.rank) byDomain.set(r.domain, (byDomain.get(r.domain) ?? new Map()).set(r.d, r.rank));
    const mean = (d: string) => sum([...byDomain.get(d)!.values()]) / byDomain.get(d)!.size;
    const trackedHere = [...byDomain.keys()].filter((d) => tracked.has(d));
    expect(trackedHere.length).toBeGreaterThan(0);
    const target = Math.min(...trackedHere.map(mean));
    const competitors = [...byDomain.keys()]
      .filter((d) => !tracked.has(d))
      .sort((a, b) => Math.abs(mean(a) - target) - Math.abs(mean(b) - target) || mean(a) - mean(b) || a.localeCompare(b))
      .slice(0, 3);
    expect(c.rank!.labels).toBe(facts.dates);
    expect(c.rank!.series.map((s) => s.label).sort()).toEqual([...trackedHere.map((d) => `${d} (tracked)`), ...competitors].sort());
    for (const s of c.rank!.series) {
      const ranks = byDomain.get(s.label.replace(' (tracked)', ''))!;
      expect(s.data).toEqual(dates.map((d) => ranks.get(d) ?? null));
      expect(s.points).toBe(ranks.size);
      expect(s.drawn).toBe(ranks.size);
    }

    // Visibility: tracked domains with visibility, and the eight with the most.
    const present = new Set(facts.visibilityDomains.map((r) => r.domain));
    const expectedDomains = new Set([...[...tracked].filter((d) => present.has(d)), ...facts.visibilityTop.map((r) => r.domain)]);
    expect(c.visibility!.series).toHaveLength(expectedDomains.size);
    for (const s of c.visibility!.series) expect(s.points).toBe(facts.dates);
    const rw = c.visibility!.series.find((s) => s.label === 'runnersworld.com (tracked)')!;
    facts.runnersworld.forEach((r, i) => expect(rw.data[i] as number).toBeCloseTo(r.pct, 1));

    // Spend: one stacked series per charged endpoint, a bar per day, adding up to the ledger's charges.
    expect(c.spend!.series).toHaveLength(facts.spend.endpoints);
    for (const s of c.spend!.series) expect(s.points).toBe(facts.spend.days);
    expect(sum(c.spend!.series.flatMap((s) => s.data))).toBeCloseTo(facts.spend.cny, 3);

    // Search volume: the total line plus the five largest keywords, a point per month; seasonality a bar per calendar month.
    expect(c.volume!.series).toHaveLength(1 + Math.min(5, facts.volumeKeywords));
    for (const s of c.volume!.series) expect(s.points).toBe(facts.volumeMonths.length);
    expect(c.volume!.series[0]!.data).toEqual(facts.volumeMonths.map((m) => m.v));
    expect(c.seasonality!.series).toHaveLength(1);
    expect(c.seasonality!.series[0]!.points).toBe(facts.calendarMonths);

    // Clusters: a series per cluster, a point per clustered keyword.
    expect(c.clusters!.series).toHaveLength(facts.clusters);
    expect(sum(c.clusters!.series.map((s) => s.points))).toBe(facts.clustered);
    expect(sum(c.clusters!.series.map((s) => s.drawn))).toBe(facts.clustered);

    expect(errors).toEqual([]);
    expect(external).toEqual([]);
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'report.png'), fullPage: true });
    await page.close();
  });

  it('filters by location, domain and pipeline in the page', async () => {
    const { page, errors } = await open(browser, report.out);
    const facts = await withWarehouse(warehouseDir, async (wh) => ({
      ukKeywords: (await wh.all<{ n: number }>(`select count(distinct keyword)::int as n from rank_history where location_code = 2826`))[0]!
        .n,
      ukRunnersworld: await wh.all<{ pct: number }>(
        `select 100 * sum(visibility_pct * keywords_checked) / sum(keywords_checked) as pct from domain_visibility_daily
         where domain = 'runnersworld.com' and location_code = 2826 group by check_date order by check_date`,
      ),
      rwUkKeywords: (
        await wh.all<{ n: number }>(
          `select count(distinct keyword)::int as n from rank_history where domain = 'runnersworld.com' and location_code = 2826 and not is_lost`,
        )
      )[0]!.n,
      rwClustered: (
        await wh.all<{ n: number }>(
          `select count(*)::int as n from keyword_clusters where keyword in (select keyword from rank_history where domain = 'runnersworld.com' and not is_lost)`,
        )
      )[0]!.n,
      keywordsSpend: (
        await wh.all<{ endpoints: number; cny: number }>(
          `select count(distinct endpoint_id) filter (where charge_cny <> 0)::int as endpoints, sum(charge_cny)::double as cny from spend_daily where pipeline = 'keywords'`,
        )
      )[0]!,
      allEndpoints: (
        await wh.all<{ n: number }>(`select count(distinct endpoint_id) filter (where charge_cny <> 0)::int as n from spend_daily`)
      )[0]!.n,
    }));

    await page.selectOption('#f-location', { label: 'United Kingdom (2826)' });
    const uk = await options(page, 'rank-keyword');
    expect(uk).toHaveLength(facts.ukKeywords);
    for (const o of uk) expect(o.endsWith('— United Kingdom')).toBe(true);
    let c = await charts(page);
    const rw = c.visibility!.series.find((s) => s.label === 'runnersworld.com (tracked)')!;
    facts.ukRunnersworld.forEach((r, i) => expect(rw.data[i] as number).toBeCloseTo(r.pct, 1));

    await page.selectOption('#f-domain', { label: 'runnersworld.com (tracked)' });
    c = await charts(page);
    expect(c.visibility!.series.map((s) => s.label)).toEqual(['runnersworld.com (tracked)']);
    expect(await options(page, 'rank-keyword')).toHaveLength(facts.rwUkKeywords);
    expect(c.rank!.series.map((s) => s.label)).toContain('runnersworld.com (tracked)');
    expect(sum(c.clusters!.series.map((s) => s.points))).toBe(facts.rwClustered);

    expect(c.spend!.series).toHaveLength(facts.allEndpoints);
    await page.selectOption('#f-pipeline', { label: 'keywords' });
    c = await charts(page);
    expect(facts.keywordsSpend.endpoints).toBeLessThan(facts.allEndpoints); // the cluster run's calls are another pipeline's
    expect(c.spend!.series).toHaveLength(facts.keywordsSpend.endpoints);
    expect(sum(c.spend!.series.flatMap((s) => s.data))).toBeCloseTo(facts.keywordsSpend.cny, 3);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('refuses an unknown pipeline or a bad limit before writing anything (exit code 2 from the CLI)', async () => {
    const out = join(tmp.dir, 'refused.html');
    for (const [opts, message] of [
      [{ pipelines: ['nope'] }, /no pipeline nope in the warehouse at .*; it has: \(models\), keywords\./],
      [{ days: 0 }, /--days must be a whole number of at least 1, got 0/],
      [{ topKeywords: 2.5 }, /--top-keywords must be a whole number of at least 0, got 2\.5/],
    ] as const) {
      const err = await buildReport({ warehouseDir, out, ...opts }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'ETL_CONFIG_INVALID' });
      expect(exitCodeFor(err)).toBe(ExitCode.configInvalid);
      expect((err as Error).message).toMatch(message);
    }
    expect(existsSync(out)).toBe(false);
  });

  it('the CLI writes the file, limits it to a pipeline, and refuses a warehouse without models with exit code 2', async () => {
    const out = join(tmp.dir, 'cli.html');
    const ok = await cli([
      'report',
      '--warehouse',
      warehouseDir,
      '--out',
      out,
      '--pipeline',
      'keywords',
      '--pipeline-file',
      'pipelines/keywords.yaml',
    ]);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^wrote .*cli\.html \(\d+ KB\)/);
    expect(ok.stdout).toContain('tracked domains: track_domains of pipelines/keywords.yaml');
    expect((await stat(out)).size).toBeGreaterThan(200_000);

    const bare = join(tmp.dir, 'bare');
    (await Warehouse.open(bare)).close();
    const none = await cli(['report', '--warehouse', bare, '--out', join(tmp.dir, 'none.html')]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('has no model tables');
    expect(none.stderr).toContain('pipeline models run');
    expect(existsSync(join(tmp.dir, 'none.html'))).toBe(false);

    const missing = await cli(['report', '--warehouse', join(tmp.dir, 'nowhere')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no warehouse');
  });
});

describe('report size for 1,000 keywords', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    tmp = await tempDir('pipeline-report-size-');
  });
  afterAll(async () => {
    await tmp?.cleanup();
  });

  it('stays under 2 MB with 90 nights in two locations, 24 months of volume and the cluster map, and still renders', async () => {
    const dir = join(tmp.dir, 'wh');
    await writeSyntheticWarehouse(dir, { keywords: 1000, days: 90, depth: 6, months: 24, locations: [2840, 2826], dimensions: 256 });
    const file = join(tmp.dir, 'synthetic.yaml');
    await writeFile(
      file,
      `name: ${SYNTHETIC_PIPELINE}\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [placeholder]\n    track_domains: [${SYNTHETIC_TRACKED}]\n`,
    );
    const r = await buildReport({ warehouseDir: dir, out: join(tmp.dir, 'report.html'), pipelineFiles: [file] });
    expect(r.bytes).toBeLessThan(2 * 1024 * 1024);
    expect(r.counts).toMatchObject({ rankKeywords: 100, volumeSeries: 2000, clusterPoints: 1000 });

    const browser = await launchChromium();
    try {
      const { page, errors } = await open(browser, r.out);
      const c = await charts(page);
      expect(c.rank!.labels).toBe(90);
      expect(await options(page, 'rank-keyword')).toHaveLength(200);
      expect(c.visibility!.series[0]!.label).toBe(`${SYNTHETIC_TRACKED} (tracked)`);
      expect(sum(c.clusters!.series.map((s) => s.points))).toBe(1000);
      expect(c.volume!.series[0]!.label).toBe('All 1000 keywords');
      expect(errors).toEqual([]);
      await mkdir(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'report-1000-keywords.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  }, 240_000);
});

import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger } from './helpers.js';
import { cli, KEY, planHarness, SHALLOW, YAML } from './plan-helpers.js';

describe('pipeline plan', () => {
  const h = planHarness();
  const { tmp, file, shallow, env } = h;

  it('counts tasks, POSTs and calls per rate family, and posts nothing', async () => {
    const out = await cli(['plan', file, '--json', '--warehouse', join(tmp.dir, 'none')], env());
    expect(out.code).toBe(0);
    const s = JSON.parse(out.stdout);
    expect(s).toMatchObject({ pipeline: 'shoes', tasks: 8, duplicatesDropped: 2, posts: 1 });
    // 1 POST + 8 task_get + 1 ready-list poll, all in the SERP family (60 a minute)
    expect(s.families).toEqual([{ family: 'serp_keywords_domain', calls: 10, perMinute: 60, minutes: 10 / 60 }]);
    expect(h.sandbox.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(0);
    // With no past charge and no exchange rate, the price is honestly unknown.
    expect(s.estimatedCny).toBeNull();
    expect(s.endpoints[0].note).toContain('--cny-per-usd');
  });

  it('refuses what a run would refuse before buying, with the same file, line and rule, and creates no warehouse', async () => {
    const bad = join(tmp.dir, 'badloc.yaml');
    await writeFile(bad, YAML.replace('locations: [2840, 2826]', 'locations: [2840, 99999]'));
    const out = await cli(['plan', bad, '--warehouse', join(tmp.dir, 'none')], env());
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`${bad}:6:23  jobs[0].locations[1]: location 99999 is not in serp/engA/locations`);
    expect(out.stdout).toBe('');
    expect(existsSync(join(tmp.dir, 'none'))).toBe(false);
    expect(h.sandbox.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(0);
  });

  it('prices from the account rates when told the exchange rate, the extra depth blocks included', async () => {
    const s = JSON.parse((await cli(['plan', file, '--json', '--cny-per-usd', '7.2', '--warehouse', join(tmp.dir, 'none')], env())).stdout);
    expect(s.endpoints[0].priceSource).toBe('rates');
    // depth 100: the base rate covers 10 results, nine further blocks of 10 are added.
    expect(s.endpoints[0].note).toContain('9 further block(s) of 10 results');
    expect(s.endpoints[0].note).not.toContain('lower bound');
    const base = JSON.parse(
      (await cli(['plan', shallow, '--json', '--cny-per-usd', '7.2', '--warehouse', join(tmp.dir, 'none')], env())).stdout,
    );
    expect(base.endpoints[0].note).toBe('base rate');
    expect(s.endpoints[0].cnyPerTask / base.endpoints[0].cnyPerTask).toBeCloseTo(1 + 9 * 0.75, 6);
    // Without the exchange rate a first run is still priced, in the account's USD, depth included.
    const usdOnly = JSON.parse((await cli(['plan', file, '--json', '--warehouse', join(tmp.dir, 'none')], env())).stdout);
    const note = String(usdOnly.endpoints[0].note);
    expect(note).toMatch(/^[\d.]+ USD a task \(base rate plus 9 further block\(s\) of 10 results/);
    expect(Number(note.split(' ')[0]) / (s.endpoints[0].cnyPerTask / 7.2)).toBeCloseTo(1, 2);
  });

  it("sends the spec's default depth of 10 when a SERP job names none", async () => {
    const wh = join(tmp.dir, 'wh-shallow');
    await runPipeline({
      pipeline: parsePipeline(SHALLOW, shallow, {}),
      file: shallow,
      warehouseDir: wh,
      baseUrl: h.sandbox.url,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 5,
    });
    const sent = await withWarehouse(wh, (w) => w.all<{ depth: number }>(`SELECT DISTINCT depth FROM serp_results`));
    expect(sent).toEqual([{ depth: 10 }]);
  });
});

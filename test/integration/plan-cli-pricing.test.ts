// The later cases of plan-cli.test.ts, split off so vitest runs the two halves in parallel (issue 45).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { silentLogger } from './helpers.js';
import { cli, KEY, planHarness, YAML } from './plan-helpers.js';

describe('pipeline plan', () => {
  const h = planHarness();
  const { tmp, file, env } = h;

  it('prices a pipeline it has run before at exactly what that run was charged', async () => {
    const wh = join(tmp.dir, 'wh');
    const pipeline = parsePipeline(YAML, file, {});
    const first = await runPipeline({
      pipeline,
      file,
      warehouseDir: wh,
      baseUrl: h.sandbox.url,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 5,
    });
    const s = JSON.parse((await cli(['plan', file, '--json', '--warehouse', wh], env())).stdout);
    expect(s.endpoints[0].priceSource).toBe('ledger:pipeline');
    expect(s.estimatedCny.toFixed(6)).toBe(first.chargedCny);
    // The first estimate (account rates, no ledger) counts the deep pages: within 1% of the real charge.
    const fromRates = JSON.parse(
      (await cli(['plan', file, '--json', '--cny-per-usd', '7.2', '--warehouse', join(tmp.dir, 'none')], env())).stdout,
    );
    expect(Math.abs(fromRates.estimatedCny - s.estimatedCny) / s.estimatedCny).toBeLessThan(0.01);
  });

  it('prices the embedding calls of an embeddings job, less the keywords the warehouse has embedded', async () => {
    const embFile = join(tmp.dir, 'emb.yaml');
    const yaml =
      'name: emb\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [running shoes, trail shoes, boots]\n  - kind: embeddings\n    batch_size: 2\n';
    await writeFile(embFile, yaml);
    const before = JSON.parse((await cli(['plan', embFile, '--json', '--warehouse', join(tmp.dir, 'none')], env())).stdout);
    expect(before.embeddings).toEqual([
      {
        job: 'embeddings-1',
        model: 'text-embedding-3-small',
        dimensions: 256,
        keywords: 3,
        cached: 0,
        calls: 2,
        tokens: 4 + 3 + 2,
        cnyPer1kTokens: 0.00032,
        cny: (9 / 1000) * 0.00032,
      },
    ]);
    expect(before.families).toContainEqual({ family: 'v1_other', calls: 2, perMinute: 120, minutes: 2 / 120 });
    // After a run has embedded them, a plan buys none again.
    const wh = join(tmp.dir, 'wh-emb');
    await runPipeline({
      pipeline: parsePipeline(yaml, embFile, {}),
      file: embFile,
      warehouseDir: wh,
      baseUrl: h.sandbox.url,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 5,
    });
    const after = JSON.parse((await cli(['plan', embFile, '--json', '--warehouse', wh], env())).stdout);
    expect(after.embeddings[0]).toMatchObject({ keywords: 3, cached: 3, calls: 0, tokens: 0, cny: 0 });
    const text = (await cli(['plan', embFile, '--warehouse', wh], env())).stdout;
    expect(text).toMatch(/embeddings\s+\|?\s*model/);
  });

  it('prints a table for people with the time the rate limits impose', async () => {
    const out = await cli(['plan', file, '--warehouse', join(tmp.dir, 'none')], env());
    expect(out.stdout).toContain('8 tasks in 1 POST(s) (2 repeats dropped); nothing was posted');
    expect(out.stdout).toMatch(/at least 0\.2 min at the rate limits/);
  });
});

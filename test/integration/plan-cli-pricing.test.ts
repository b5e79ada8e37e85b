// The later cases of plan-cli.test.ts, split off so vitest runs the two halves in parallel (issue 45).
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { silentLogger, tempDir } from './helpers.js';

const KEY = 'svc_live_testplantest';
const SHALLOW = 'name: shallow\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [a, b]\n';
const YAML =
  'name: shoes\nbudget_cny: 2\njobs:\n  - kind: serp\n    depth: 100\n    locations: [2840, 2826]\n    keywords: [a, b, c, A, d]\n';

function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/pipeline.mjs', ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('pipeline plan', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let file: string;
  let shallow: string;
  const env = () => ({ SVC_API_KEY: KEY, SVC_BASE_URL: sandbox.url });

  beforeAll(async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    tmp = await tempDir('pipeline-plan-');
    file = join(tmp.dir, 'shoes.yaml');
    await writeFile(file, YAML);
    shallow = join(tmp.dir, 'shallow.yaml');
    await writeFile(shallow, SHALLOW);
  });
  afterAll(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('prices a pipeline it has run before at exactly what that run was charged', async () => {
    const wh = join(tmp.dir, 'wh');
    const pipeline = parsePipeline(YAML, file, {});
    const first = await runPipeline({
      pipeline,
      file,
      warehouseDir: wh,
      baseUrl: sandbox.url,
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
      baseUrl: sandbox.url,
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

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, tempDir } from './helpers.js';

const yaml = `name: llm-check
jobs:
  - kind: serp
    locations: [2840]
    keywords: [running shoes]
  - kind: llm_responses
    prompts: [best running shoes?]
    models:
      - llm-alpha
      - llm-gamma
      - llm-beta-2.0
`;

describe('llm_responses models are checked against the service list before anything is bought', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    tmp = await tempDir('pipeline-llm-');
  });
  afterAll(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('refuses a model the service does not offer with its file, line and field, and posts nothing', async () => {
    const file = join(tmp.dir, 'llm.yaml');
    await writeFile(file, yaml);
    const pipeline = await loadPipeline(file);
    const run = runPipeline({
      pipeline,
      file,
      warehouseDir: join(tmp.dir, 'wh'),
      baseUrl: sandbox.url,
      apiKey: 'svc_live_testllm',
      logger: silentLogger,
      pollIntervalMs: 5,
    });
    const err = await run.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    const issues = (err as ConfigError).issues;
    // A base name and a version of one are both offered; only the unknown name is refused.
    expect(issues).toEqual([
      {
        file,
        line: 10,
        column: 9,
        field: 'jobs[1].models[1]',
        rule: expect.stringMatching(/model 'llm-gamma' is not offered .*llm-alpha, llm-alpha-o3, llm-beta, llm-beta-thinking/),
      },
    ]);
    // The emulator saw the free models list and no charged call.
    const paid = sandbox.log.filter((l) => l.method === 'POST');
    expect(paid).toEqual([]);
    expect(sandbox.log.some((l) => l.path.endsWith('/llm_responses/models'))).toBe(true);
    await withWarehouse(join(tmp.dir, 'wh'), async (wh) => {
      const [t] = await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM tasks`);
      expect(t!.n).toBe(0);
    });
  });
});

/** Issue 16, point 9: reasoning models are known from the models list's own flag, not from their names. */
describe('reasoning models by the list flag', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    tmp = await tempDir('pipeline-llm-reason-');
  });
  afterAll(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });
  const job = (model: string, extra: string) =>
    `name: reason\njobs:\n  - kind: llm_responses\n    prompts: [best running shoes?]\n    models: [${model}]\n${extra}`;

  it('refuses 512 output tokens and a temperature for a model the list flags as reasoning, whatever its name', async () => {
    const file = join(tmp.dir, 'delta.yaml');
    await writeFile(file, job('llm-delta', '    max_output_tokens: 512\n    params:\n      temperature: 0.5\n'));
    const err = await runPipeline({
      pipeline: await loadPipeline(file),
      file,
      warehouseDir: join(tmp.dir, 'wh1'),
      baseUrl: sandbox.url,
      apiKey: 'svc_live_testreason',
      logger: silentLogger,
      pollIntervalMs: 5,
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues.map((i) => [i.field, i.line])).toEqual([
      ['jobs[0].max_output_tokens', 6],
      ['jobs[0].params.temperature', 8],
    ]);
    expect((err as Error).message).toContain("reasoning model 'llm-delta' (flagged so by llm_responses/models)");
    expect(sandbox.log.filter((l) => l.method === 'POST')).toEqual([]);
  });

  it('buys a non-reasoning model whose name looks like a reasoning one with 512 tokens and a temperature', async () => {
    const file = join(tmp.dir, 'o1.yaml');
    await writeFile(file, job('llm-o1-lite', '    max_output_tokens: 512\n    params:\n      temperature: 0.5\n'));
    const s = await runPipeline({
      pipeline: await loadPipeline(file),
      file,
      warehouseDir: join(tmp.dir, 'wh2'),
      baseUrl: sandbox.url,
      apiKey: 'svc_live_testreason',
      logger: silentLogger,
      pollIntervalMs: 5,
    });
    expect(s.state).toBe('completed');
    expect(s.tasks.collected).toBe(1);
  });
});

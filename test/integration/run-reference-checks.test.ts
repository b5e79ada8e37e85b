import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, tempDir } from './helpers.js';

const bad = `name: ref-check
jobs:
  - kind: serp
    locations: [2840]
    keywords: [running shoes]
  - kind: ai_volume
    keywords: [running shoes]
    locations: [2840, 9999999]
    languages: [en, de]
  - kind: endpoint
    endpoint: on_page.lighthouse.live.json
    targets: [example.com]
    params:
      url: "https://{target}/"
      version: "9.9.9"
`;

const good = `name: ref-ok
jobs:
  - kind: ai_volume
    keywords: [running shoes]
    locations: [2840, Germany]
    languages: [en]
  - kind: endpoint
    endpoint: on_page.lighthouse.live.json
    targets: [example.com]
    params:
      url: "https://{target}/"
      version: "12.4.0"
`;

describe('AI keyword data places and lighthouse versions are checked against the service lists before anything is bought (issue 16, point 12)', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeEach(async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    tmp = await tempDir('pipeline-ref-');
  });
  afterEach(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('refuses an unknown location, a language not offered there and an unknown lighthouse version, with file, line and field; posts nothing', async () => {
    const file = join(tmp.dir, 'bad.yaml');
    await writeFile(file, bad);
    const err = await runPipeline({
      pipeline: await loadPipeline(file),
      file,
      warehouseDir: join(tmp.dir, 'wh'),
      baseUrl: sandbox.url,
      apiKey: 'svc_live_refcheck',
      logger: silentLogger,
      pollIntervalMs: 5,
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    const issues = (err as ConfigError).issues.map((i) => ({ file: i.file, line: i.line, field: i.field, rule: i.rule }));
    expect(issues).toEqual([
      {
        file,
        line: 8,
        field: 'jobs[1].locations[1]',
        rule: expect.stringContaining('location 9999999 is not in ai_keyword_data/locations_and_languages'),
      },
      { file, line: 9, field: 'jobs[1].languages[1]', rule: expect.stringMatching(/language 'de' is not offered .* for United States/) },
      {
        file,
        line: 15,
        field: 'jobs[2].params.version',
        rule: expect.stringMatching(
          /lighthouse version '9.9.9' is not offered \(on_page\/lighthouse\/versions lists 12.6.1, 12.4.0, 11.7.1\)/,
        ),
      },
    ]);
    // Only the free reference lists were read: nothing was bought.
    expect(sandbox.log.filter((l) => l.method === 'POST')).toEqual([]);
    expect(sandbox.log.map((l) => l.path)).toEqual(
      expect.arrayContaining(['/v3/ai_optimization/ai_keyword_data/locations_and_languages', '/v3/on_page/lighthouse/versions']),
    );
    expect(sandbox.balanceCny()).toBe('1000.0000');
    await withWarehouse(join(tmp.dir, 'wh'), async (wh) => {
      const [t] = await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM tasks`);
      expect(t!.n).toBe(0);
    });
  });

  it('lets listed places (by code or name) and a listed version through, reading each list once', async () => {
    const file = join(tmp.dir, 'good.yaml');
    await writeFile(file, good);
    const s = await runPipeline({
      pipeline: await loadPipeline(file),
      file,
      warehouseDir: join(tmp.dir, 'wh'),
      baseUrl: sandbox.url,
      apiKey: 'svc_live_refcheck',
      logger: silentLogger,
      pollIntervalMs: 5,
      models: false,
    });
    expect(s.state).toBe('completed');
    expect(s.tasks.collected).toBe(s.tasks.planned);
    expect(sandbox.log.filter((l) => l.path.endsWith('/locations_and_languages'))).toHaveLength(1);
    expect(sandbox.log.filter((l) => l.path.endsWith('/lighthouse/versions'))).toHaveLength(1);
  });
});

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

const serpPlaces = `name: serp-places
jobs:
  - kind: serp
    locations: [2840, Atlantis, 99999999, "new york,united states"]
    languages: [en, xx, English]
    keywords: [running shoes]
  - kind: serp
    engines: [engB]
    locations: [Atlantis]
    keywords: [running shoes]
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

  /** Writes `yaml` as `name` and runs it on the sandbox, into the test's warehouse. */
  async function run(name: string, yaml: string, o: { models?: false; now?: () => Date } = {}) {
    const file = join(tmp.dir, name);
    await writeFile(file, yaml);
    return {
      file,
      run: async () =>
        runPipeline({
          pipeline: await loadPipeline(file),
          file,
          warehouseDir: join(tmp.dir, 'wh'),
          baseUrl: sandbox.url,
          apiKey: 'svc_live_testrefcheck',
          logger: silentLogger,
          pollIntervalMs: 5,
          ...o,
        }),
    };
  }

  /** The ConfigError a run of `yaml` is refused with (null when it is not refused). */
  async function refusal(name: string, yaml: string): Promise<{ file: string; err: unknown }> {
    const { file, run: go } = await run(name, yaml);
    const err = await go().then(
      () => null,
      (e: unknown) => e,
    );
    return { file, err };
  }

  it('refuses an unknown location, a language not offered there and an unknown lighthouse version, with file, line and field; posts nothing', async () => {
    const { file, err } = await refusal('bad.yaml', bad);
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
    // Only the free reference lists were read: nothing was bought, and the message says so (not "nothing was sent").
    expect((err as ConfigError).message).toContain('nothing was bought (only the free reference lists these checks need were read)');
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
    const s = await (await run('good.yaml', good, { models: false })).run();
    expect(s.state).toBe('completed');
    expect(s.tasks.collected).toBe(s.tasks.planned);
    expect(sandbox.log.filter((l) => l.path.endsWith('/locations_and_languages'))).toHaveLength(1);
    expect(sandbox.log.filter((l) => l.path.endsWith('/lighthouse/versions'))).toHaveLength(1);
  });

  it('refuses a SERP location or language the service lists do not hold (codes, names in any case, cities), before anything is bought', async () => {
    const { err } = await refusal('serp.yaml', serpPlaces);
    expect(err).toBeInstanceOf(ConfigError);
    // The engB job is not checked (the lists are engA's); the city passes by its name in lower case.
    expect((err as ConfigError).issues.map((i) => ({ line: i.line, field: i.field, rule: i.rule }))).toEqual([
      { line: 4, field: 'jobs[0].locations[1]', rule: expect.stringContaining('location "Atlantis" is not in serp/engA/locations') },
      { line: 4, field: 'jobs[0].locations[2]', rule: expect.stringContaining('location 99999999 is not in serp/engA/locations') },
      { line: 5, field: 'jobs[0].languages[1]', rule: expect.stringContaining("language 'xx' is not in serp/engA/languages") },
    ]);
    expect(sandbox.log.filter((l) => l.method === 'POST')).toEqual([]);
    expect(sandbox.log.filter((l) => l.path === '/v3/serp/engA/locations')).toHaveLength(1);
    expect(sandbox.log.filter((l) => l.path === '/v3/serp/engA/languages')).toHaveLength(1);
    expect(sandbox.balanceCny()).toBe('1000.0000');
  });

  it('keeps the lists it read for a week: the next night asks for none, a night eight days on reads them again', async () => {
    let t = Date.parse('2026-11-20T03:00:00Z');
    const now = () => new Date(t);
    const pipeline = await run(
      'serp-ok.yaml',
      'name: serp-ok\njobs:\n  - kind: serp\n    locations: [2840, "seattle,united states"]\n    keywords: [running shoes]\n',
      {
        models: false,
        now,
      },
    );
    const night = async () => expect((await pipeline.run()).state).toBe('completed');
    const reads = () => sandbox.log.filter((l) => l.path === '/v3/serp/engA/locations' || l.path === '/v3/serp/engA/languages').length;
    await night();
    expect(reads()).toBe(2);
    t += 86_400_000;
    await night();
    expect(reads()).toBe(2);
    t += 8 * 86_400_000;
    await night();
    expect(reads()).toBe(4);
  });
});

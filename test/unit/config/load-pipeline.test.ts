import { describe, expect, it } from 'vitest';
import { loadPipeline } from '../../../src/config/index.js';
import { ConfigError } from '../../../src/errors.js';

const minimal = 'name: a\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: ["${KW}"]\n';

describe('loadPipeline', () => {
  it('reads through the injected readFile and keeps the file name', async () => {
    const seen: string[] = [];
    const p = await loadPipeline('pipelines/a.yaml', {
      env: { KW: 'trail shoes' },
      readFile: async (path) => {
        seen.push(path);
        return minimal;
      },
    });
    expect(seen).toEqual(['pipelines/a.yaml']);
    expect(p.file).toBe('pipelines/a.yaml');
    expect((p.jobs[0] as { keywords: string[] }).keywords).toEqual(['trail shoes']);
  });

  it('reads pipelines/keywords.yaml from disk by default', async () => {
    const p = await loadPipeline(new URL('../../../pipelines/keywords.yaml', import.meta.url).pathname);
    expect(p.name).toBe('keywords');
  });

  it('turns a missing file into a ConfigError', async () => {
    const err = await loadPipeline('/nonexistent/nope.yaml').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues).toEqual([
      { file: '/nonexistent/nope.yaml', line: 1, column: 1, field: '', rule: 'file not found' },
    ]);
    expect((err as ConfigError).code).toBe('ETL_CONFIG_INVALID');
  });

  it('names the file in schema issues', async () => {
    const err = await loadPipeline('b.yaml', { env: {}, readFile: async () => minimal }).catch((e: unknown) => e);
    expect((err as ConfigError).issues).toMatchObject([{ file: 'b.yaml', line: 5, field: 'jobs[0].keywords[0]' }]);
  });

  it('refuses a pipeline whose SERP jobs expand past a million tasks, naming the keywords file and the job, before planning', async () => {
    const yaml = (n: number) =>
      `name: big\njobs:\n  - kind: serp\n    locations: [2840, 2826]\n    devices: [desktop, mobile]\n    keywords_file: kw${n}.txt\n`;
    const words = (n: number) => Array.from({ length: n }, (_, i) => `k${i}`).join('\n');
    const load = (n: number) =>
      loadPipeline('/p/big.yaml', { env: {}, readFile: async (path) => (path.endsWith('.yaml') ? yaml(n) : words(n)) });
    // 250,000 keywords x 2 locations x 2 devices: exactly the limit.
    expect(((await load(250_000)).jobs[0] as { keywords: string[] }).keywords).toHaveLength(250_000);
    const err = (await load(250_001).catch((e: unknown) => e)) as ConfigError;
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.issues).toEqual([
      {
        file: '/p/kw250001.txt',
        line: 1,
        column: 1,
        field: 'jobs[0]',
        rule: 'expands to 1,000,004 SERP tasks (keywords × engines × devices × locations × languages); at most 1,000,000 a pipeline: split the keywords over several pipeline files',
      },
    ]);
  });
});

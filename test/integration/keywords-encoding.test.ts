import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeServiceKeyword } from '../../src/catalog/index.js';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, tempDir } from './helpers.js';

const KEY = 'svc_live_testpercentplus';
const WRITTEN = ['c++ tutorial', '100% cotton shirt', 'a+b %20 c'];

/** Issue 16, point 1: the service decodes `%##` and `+` in `keyword`; what the user wrote must be what is searched and loaded. */
describe('% and + in SERP keywords', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };

  beforeAll(async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    tmp = await tempDir('pipeline-kwenc-');
  });
  afterAll(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('the emulator decodes as the service does: a keyword sent as written is searched as something else', async () => {
    const res = await request(`${sandbox.url}/v3/serp/engA/organic/live/advanced`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ keyword: 'c++ tutorial', location_code: 2840, language_code: 'en' }]),
    });
    const body = (await res.body.json()) as { tasks: { result: { keyword: string }[] }[] };
    expect(body.tasks[0]!.result[0]!.keyword).toBe('c   tutorial');
  });

  it('a run sends %25 and %2B, and the loaded rows show the keywords as written', async () => {
    const yaml = `name: enc\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: ${JSON.stringify(WRITTEN)}\n`;
    const summary = await runPipeline({
      pipeline: parsePipeline(yaml, 'enc.yaml', {}),
      file: 'enc.yaml',
      warehouseDir: tmp.dir,
      baseUrl: sandbox.url,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 5,
    });
    expect(summary.state).toBe('completed');
    await withWarehouse(tmp.dir, async (wh) => {
      const loaded = await wh.all<{ keyword: string }>(`SELECT keyword FROM serp_results ORDER BY keyword`);
      expect(loaded.map((r) => r.keyword)).toEqual([...WRITTEN].sort());
      const sent = await wh.all<{ keyword: string }>(`SELECT json_extract_string(spec, '$.keyword') AS keyword FROM tasks ORDER BY 1`);
      expect(sent.map((r) => r.keyword)).toEqual(WRITTEN.map(encodeServiceKeyword).sort());
    });
    expect(encodeServiceKeyword('c++ tutorial')).toBe('c%2B%2B tutorial');
    expect(encodeServiceKeyword('100% cotton shirt')).toBe('100%25 cotton shirt');
  });
});

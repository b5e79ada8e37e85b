import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adjustedRandIndex } from '../../src/models/index.js';
import { runClusters } from '../../src/run/cluster-run.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { tempDir } from './helpers.js';

/** Keywords of four topics the emulator knows (its keyword lexicon), six each. */
const TOPICS: Record<string, string[]> = {
  finance: [
    'mortgage rates today',
    'best credit card',
    'personal loan rates',
    'stock investing for beginners',
    'tax return deadline',
    'savings account interest',
  ],
  food: [
    'easy pizza recipe',
    'vegan soup recipe',
    'chicken pasta bake',
    'sourdough bread recipe',
    'chocolate cake recipe',
    'best coffee beans',
  ],
  travel: [
    'cheap flights to paris',
    'hotels in tokyo',
    'london travel itinerary',
    'beach vacation ideas',
    'flight deals europe',
    'best hotels near beach',
  ],
  tech: [
    'best laptop for students',
    'iphone vs android phone',
    'noise cancelling headphones',
    'gaming monitor review',
    'wifi router setup',
    'android tablet deals',
  ],
};

describe("keyword clusters from the emulator's /v1/embeddings through the client", () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    sandbox = await startSandbox();
    tmp = await tempDir('pipeline-cluster-svc-');
  });
  afterAll(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('finds the known topics (ARI at least 0.9), embeds each keyword once and puts every call in the ledger', async () => {
    const keywords = Object.values(TOPICS).flat();
    const opts = { warehouseDir: tmp.dir, baseUrl: sandbox.url, apiKey: 'svc_live_testclusters', keywords };
    const first = await runClusters(opts);
    expect(first.keywords).toBe(24);
    expect(first.embeddedNow).toBe(24);
    const truth = new Map(Object.entries(TOPICS).flatMap(([t, ks]) => ks.map((k) => [k, t] as const)));
    await withWarehouse(tmp.dir, async (wh) => {
      const rows = await wh.all<{ keyword: string; cluster: number }>(
        `select keyword, cluster_id as cluster from keyword_clusters order by keyword`,
      );
      expect(rows).toHaveLength(24);
      const ari = adjustedRandIndex(
        rows.map((r) => r.cluster),
        rows.map((r) => truth.get(r.keyword)!),
      );
      expect(ari).toBeGreaterThanOrEqual(0.9);
      const ledger = await wh.all<{ endpoint_id: string; n: number }>(
        `select endpoint_id, count(*)::int as n from ledger where run_id = $1 group by all order by 1`,
        [first.runId],
      );
      expect(ledger).toEqual([
        { endpoint_id: 'v1.chat.completions', n: first.labelCalls },
        { endpoint_id: 'v1.embeddings', n: first.embedCalls },
      ]);
    });
    const again = await runClusters(opts);
    expect(again).toMatchObject({ embeddedNow: 0, fromCache: 24, embedCalls: 0, labelCalls: 0 });
  });
});

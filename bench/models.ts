// `npx tsx bench/models.ts [--keywords 1000 --days 365]`: the model layer's figures.
//   models.incremental_ratio  one new day built incrementally / a full rebuild of the same history
//                             (target <= 0.05; the size is 1,000 keywords x 365 nights at
//                             depth 100, about 7 minutes here, 3 of them writing the history, within
//                             the warehouse's default 4 GB: the default is smaller, 100 x 120)
//   models.cluster_ari        adjusted Rand index of the clusters of 24 keywords of 4 known topics,
//                             embedded by the emulator's /v1/embeddings through the client (target >= 0.9)
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adjustedRandIndex, DEFAULT_SQL_DIR, discoverModels } from '../src/models/index.js';
import { measureIncrementalRatio } from './lib/measure-incremental.js';
import { runClusters } from '../src/run/cluster-run.js';
import { startSandbox } from '../src/sandbox/index.js';
import { Warehouse, withWarehouse } from '../src/warehouse/index.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
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

const root = await mkdtemp(join(tmpdir(), 'pipeline-bench-models-'));
try {
  const shape = { keywords: arg('keywords', 100), days: arg('days', 120), depth: 100 };
  const wh = await Warehouse.open(join(root, 'history'));
  try {
    const r = await measureIncrementalRatio(wh, await discoverModels(DEFAULT_SQL_DIR), shape);
    console.log(
      `rank history on ${shape.keywords} keywords x ${shape.days} nights at depth ${shape.depth}: full ${r.fullS.toFixed(2)} s, one new day ${r.incrementalS.toFixed(2)} s`,
    );
    console.log(`models.incremental_ratio ${r.ratio.toFixed(4)}`);
  } finally {
    wh.close();
  }
  const sandbox = await startSandbox();
  try {
    const dir = join(root, 'clusters');
    await runClusters({ warehouseDir: dir, baseUrl: sandbox.url, apiKey: 'svc_sandbox_bench', keywords: Object.values(TOPICS).flat() });
    const truth = new Map(Object.entries(TOPICS).flatMap(([t, ks]) => ks.map((k) => [k, t] as const)));
    const rows = await withWarehouse(dir, (w) =>
      w.all<{ keyword: string; cluster_id: number }>(`select keyword, cluster_id from keyword_clusters`),
    );
    console.log(
      `models.cluster_ari ${adjustedRandIndex(
        rows.map((r) => r.cluster_id),
        rows.map((r) => truth.get(r.keyword)!),
      ).toFixed(3)}`,
    );
  } finally {
    await sandbox.close();
  }
} finally {
  await rm(root, { recursive: true, force: true });
}

// `npx tsx bench/report.ts [--keywords 1000 --days 90]`: the report's size.
//   report.size_mb_1000_keywords  size of `pipeline report`'s HTML file for 1,000 keywords checked nightly
//                                 for 90 days in two locations, 24 months of volume, 90 days of spend and
//                                 the 1,000-keyword cluster map (target < 2 MB, small enough to mail);
//                                 the model tables are written straight from SQL (src/report/synthetic-warehouse.ts)
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildReport } from '../src/report/index.js';
import { SYNTHETIC_PIPELINE, SYNTHETIC_TRACKED, writeSyntheticWarehouse } from './lib/synthetic-warehouse.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};

const root = await mkdtemp(join(tmpdir(), 'pipeline-bench-report-'));
try {
  const shape = { keywords: arg('keywords', 1000), days: arg('days', 90), depth: 10, months: 24, locations: [2840, 2826], dimensions: 256 };
  const dir = join(root, 'wh');
  await writeSyntheticWarehouse(dir, shape);
  const file = join(root, 'synthetic.yaml');
  await writeFile(
    file,
    `name: ${SYNTHETIC_PIPELINE}\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [placeholder]\n    track_domains: [${SYNTHETIC_TRACKED}]\n`,
  );
  const t0 = performance.now();
  const r = await buildReport({ warehouseDir: dir, out: join(root, 'report.html'), pipelineFiles: [file] });
  const s = (performance.now() - t0) / 1000;
  console.log(
    `report on ${shape.keywords} keywords x ${shape.days} nights x ${shape.locations.length} locations: ${r.bytes} bytes in ${s.toFixed(1)} s ` +
      `(rank lines for ${r.counts.rankKeywords} keywords, ${r.counts.volumeSeries} volume series, ${r.counts.clusterPoints} map points)`,
  );
  console.log(`report.size_mb_${shape.keywords}_keywords ${(r.bytes / (1024 * 1024)).toFixed(3)}`);
} finally {
  await rm(root, { recursive: true, force: true });
}

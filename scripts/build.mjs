// `npm run build` (also npm's `prepare`, so `npm ci` runs it): compiles src/ to dist/ with the
// TypeScript compiler (tsconfig.build.json), copies the files src/ reads beside its modules at run
// time (src/report/page/), and last writes dist/.source-stamp (bin/source-stamp.mjs), which
// bin/pipeline.mjs compares with src/ before running dist/. The stamp is taken before compiling:
// a file edited during the build leaves the build stale, so the sources run until the next build.
// Without the compiler (`npm ci --omit=dev`) it says so and leaves no build: the command then
// runs the sources through tsx, as before there was a build.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { STAMP_FILE, sourceStamp } from '../bin/source-stamp.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const dist = join(root, 'dist');
const quiet = process.argv.includes('--quiet');

const stamp = sourceStamp(src);
// The old stamp goes first: while this build writes, dist/ is not taken for current.
rmSync(join(dist, STAMP_FILE), { force: true });

const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
if (!existsSync(tsc)) {
  process.stderr.write('build: no TypeScript compiler installed (dev dependencies omitted?): no dist/, pipeline runs src/ through tsx\n');
  process.exit(0);
}
// A clean folder: a module removed from src/ must not stay importable from dist/.
rmSync(dist, { recursive: true, force: true });
const t0 = performance.now();
const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (r.status !== 0) {
  process.stderr.write(`build: tsc failed (exit ${r.status ?? r.signal}); no stamp written, so pipeline runs src/ through tsx\n`);
  process.exit(1);
}

// Files other than TypeScript that modules read relative to themselves (import.meta.url).
const assets = [];
const copyAssets = (dir) => {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) copyAssets(p);
    else if (!e.name.endsWith('.ts') && e.name !== 'README.md') assets.push(relative(src, p));
  }
};
copyAssets(src);
for (const a of assets) {
  mkdirSync(dirname(join(dist, a)), { recursive: true });
  cpSync(join(src, a), join(dist, a));
}
writeFileSync(join(dist, STAMP_FILE), stamp);
if (!quiet)
  process.stderr.write(
    `build: src/ compiled to dist/ in ${((performance.now() - t0) / 1000).toFixed(1)} s (${assets.length} assets copied)\n`,
  );

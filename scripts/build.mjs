// `npm run build` (also npm's `prepare`, so `npm ci` runs it): compiles src/ with the TypeScript
// compiler (tsconfig.build.json), copies the files src/ reads beside its modules at run time
// (src/report/page/), writes .source-stamp (bin/source-stamp.mjs), which bin/pipeline.mjs compares
// with src/ before running dist/, and puts the whole in place of dist/. The stamp is taken before
// compiling: a file edited during the build leaves the build stale, so the sources run until the
// next build. The build is made in .tmp/ and swapped in by two renames, so a command running from
// dist/ meanwhile still finds every module it loads later (a handler's imports): of the old build
// or of the new one, never a half-written folder. A failed build leaves dist/ as it was.
// Without the compiler (`npm ci --omit=dev`) it says so and builds nothing: the command then runs
// the sources through tsx, as before there was a build.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { STAMP_FILE, sourceStamp } from '../bin/source-stamp.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const dist = join(root, 'dist');
const next = join(root, '.tmp', `dist-build-${process.pid}`);
const old = join(root, '.tmp', `dist-old-${process.pid}`);
const quiet = process.argv.includes('--quiet');
// npm's `prepare` (`npm ci`): a failed build says so and leaves the install working, on the sources through tsx.
const lenient = process.argv.includes('--lenient');

const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
if (!existsSync(tsc)) {
  process.stderr.write('build: no TypeScript compiler installed (dev dependencies omitted?): no build, pipeline runs src/ through tsx\n');
  process.exit(0);
}
const stamp = sourceStamp(src);
const t0 = performance.now();
rmSync(next, { recursive: true, force: true });
const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', next], { stdio: 'inherit' });
if (r.status !== 0) {
  rmSync(next, { recursive: true, force: true });
  process.stderr.write(`build: tsc failed (exit ${r.status ?? r.signal}); dist/ left as it was (pipeline runs src/ while they differ)\n`);
  process.exit(lenient ? 0 : 1);
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
  mkdirSync(dirname(join(next, a)), { recursive: true });
  cpSync(join(src, a), join(next, a));
}
writeFileSync(join(next, STAMP_FILE), stamp);

// A whole new folder: a module removed from src/ does not stay importable from dist/.
if (existsSync(dist)) renameSync(dist, old);
renameSync(next, dist);
rmSync(old, { recursive: true, force: true });
if (!quiet)
  process.stderr.write(
    `build: src/ compiled to dist/ in ${((performance.now() - t0) / 1000).toFixed(1)} s (${assets.length} assets copied)\n`,
  );

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Sparticuz from '@sparticuz/chromium';
import { chromium, type Browser } from 'playwright-core';

/**
 * The headless Chromium the report test drives comes from the npm package @sparticuz/chromium
 * (exact version in package.json): its tarball holds the browser brotli-compressed, with the
 * NSS and expat libraries it links, so `npm ci` alone brings it (no install script, no
 * download). The first launch on a machine decompresses it into the temp dir (`/tmp/chromium`,
 * `/tmp/al2023/lib`, `/tmp/fonts`); later launches reuse those files. The browser always runs
 * on the package's libraries and fonts, not the machine's, so every machine runs the same one.
 */
const PACKAGE_DIR = join(dirname(createRequire(import.meta.url).resolve('@sparticuz/chromium')), '..', '..');
const VERSION = (JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string }).version;

/** The package decompresses its shared libraries only on Amazon Linux; its own `inflate` does it here, to the same place. */
async function inflateLibraries(): Promise<string> {
  const { inflate } = (await import(pathToFileURL(join(PACKAGE_DIR, 'build', 'esm', 'lambdafs.js')).href)) as {
    inflate: (file: string) => Promise<string>;
  };
  return join(await inflate(join(PACKAGE_DIR, 'bin', 'al2023.tar.br')), 'lib');
}

/**
 * The folder of a fonts.conf naming the fonts where the package put them. Its own fonts.conf names
 * `/tmp/fonts` and `/tmp/fonts-cache`, but it decompresses them into the temp dir, which the
 * suite moves to the RAM disk (test/global-setup.ts): there, with no `/tmp/fonts` from an earlier
 * run outside the suite, Chromium found no font and its pages crashed ("Page crashed", on a new
 * machine).
 */
function fontsHere(): string {
  const fonts = join(tmpdir(), 'fonts');
  const conf = readFileSync(join(fonts, 'fonts.conf'), 'utf8')
    .replaceAll('/tmp/fonts-cache', join(tmpdir(), 'fonts-cache'))
    .replaceAll('<dir>/tmp/fonts</dir>', `<dir>${fonts}</dir>`);
  const dir = join(tmpdir(), 'fonts-conf');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'fonts.conf'), conf);
  return dir;
}

export async function launchChromium(): Promise<Browser> {
  const source = `@sparticuz/chromium ${VERSION}`;
  let executablePath: string;
  let libraries: string;
  try {
    [executablePath, libraries] = await Promise.all([Sparticuz.executablePath(), inflateLibraries()]);
  } catch (e) {
    const why = `(it needs about 200 MB there; \`npm ci\` restores the package): ${(e as Error).message}`;
    throw new Error(`could not decompress the headless Chromium of ${source} into ${tmpdir()} ${why}`, { cause: e });
  }
  try {
    // Playwright adds --no-sandbox and --headless itself.
    return await chromium.launch({
      executablePath,
      env: { ...process.env, LD_LIBRARY_PATH: libraries, FONTCONFIG_PATH: fontsHere() },
    });
  } catch (e) {
    throw new Error(
      `the headless Chromium of ${source} at ${executablePath} did not start. It is a build for Linux x86-64 with glibc; ` +
        `if an earlier run was stopped while decompressing it, delete ${executablePath} and ${dirname(libraries)} and run again. ` +
        `Playwright said: ${(e as Error).message}`,
      { cause: e },
    );
  }
}

// What dist/ was built from: every entry under src/ (files and folders, so an added, removed or
// renamed file counts too) with its modification time and size. `npm run build` writes it to
// dist/.source-stamp when its compile succeeded; bin/pipeline.mjs runs dist/ only while src/ still
// gives the same text, else the sources through tsx: never a build older than the code beside it.
// Plain JavaScript outside src/, so the entry point reads it without compiling anything (about
// 10 ms for src/'s ~375 entries).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The stamp file inside a build folder. */
export const STAMP_FILE = '.source-stamp';

/** One line per entry under `srcDir`, in a stable order: `path mtimeMs size`. */
export function sourceStamp(srcDir) {
  const lines = [];
  const walk = (dir) => {
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const p = join(dir, e.name);
      const s = statSync(p);
      lines.push(`${relative(srcDir, p)} ${s.mtimeMs} ${s.size}`);
      if (e.isDirectory()) walk(p);
    }
  };
  lines.push(`. ${statSync(srcDir).mtimeMs}`);
  walk(srcDir);
  return `${lines.join('\n')}\n`;
}

/** Whether `distDir` holds a finished build of `srcDir` as it is now. */
export function buildIsCurrent(srcDir, distDir) {
  let stamp;
  try {
    stamp = readFileSync(join(distDir, STAMP_FILE), 'utf8');
  } catch {
    return false; // no build, or one that did not finish
  }
  // A copy of the build without the sources (a package of dist/ alone) has nothing to be stale against.
  if (!existsSync(srcDir)) return true;
  try {
    return stamp === sourceStamp(srcDir);
  } catch {
    return false;
  }
}

import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { charCount } from '../catalog/index.js';
import type { ConfigIssue } from '../errors.js';
import { keywordMaxChars, keywordProblem } from '../jobs/index.js';
import { decodeUtf8Strict, InvalidUtf8Error } from './read-utf8.js';

/** Largest keywords file read (a few hundred thousand keywords; more is a mistake, or an attack). */
export const MAX_KEYWORDS_FILE_BYTES = 10 * 1024 * 1024;

/** A keywords file refused before its keywords are read: the rule it broke. */
export class KeywordsFileError extends Error {}

/** Where a keywords file may be: inside `baseDir` (the pipeline file's folder) unless `allowOutside`. */
export interface KeywordsFilePlace {
  baseDir: string;
  allowOutside: boolean;
}

function inside(base: string, path: string): boolean {
  const rel = relative(base, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * Reads a keywords file from disk, refusing what is not a plain small file of the
 * pipeline's own: a symlink leading out of the pipeline file's folder (unless allowed),
 * anything but a regular file (a FIFO would block the planner, `/dev/zero` never ends),
 * and more than {@link MAX_KEYWORDS_FILE_BYTES}, counted while reading in chunks (a file
 * that grows meanwhile is stopped at the limit too). Opened non-blocking, so a FIFO
 * cannot hang the open itself.
 */
export async function readKeywordsFileFromDisk(path: string, place: KeywordsFilePlace, max = MAX_KEYWORDS_FILE_BYTES): Promise<string> {
  const real = await realpath(path);
  if (!place.allowOutside && !inside(await realpath(place.baseDir), real)) {
    throw new KeywordsFileError(
      `it leads outside the pipeline file's folder (to ${real}); set keywords_file_outside: true on the job to allow that`,
    );
  }
  const fh = await open(real, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new KeywordsFileError('not a regular file (a FIFO, device, socket or folder); give a .txt or .csv file');
    if (st.size > max) throw new KeywordsFileError(`file of ${st.size} bytes; at most ${max}`);
    const chunks: Buffer[] = [];
    let total = 0;
    const buf = Buffer.alloc(64 * 1024);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > max) throw new KeywordsFileError(`file of more than ${max} bytes; at most ${max}`);
      chunks.push(Buffer.from(buf.subarray(0, bytesRead)));
    }
    // Invalid UTF-8 would become U+FFFD and be bought as a keyword nobody wrote.
    return decodeUtf8Strict(Buffer.concat(chunks), path);
  } finally {
    await fh.close();
  }
}

/**
 * A comment line of a `.txt` keywords file: `#` alone or followed by a space, as in YAML and
 * shells. `#hashtag` and `#1 running shoes` are keywords people search for, bought as written.
 */
const COMMENT = /^#(\s|$)/;

/**
 * Reads the keywords of a `.txt` (one a line; blank lines and `# ` comments skipped) or
 * `.csv` file (the `keyword` column when the header names one, else the first column of
 * every row; a header naming no keywords column is refused, KeywordsFileError). Each keyword
 * keeps its line number, so a bad one is reported where it is.
 */
export function parseKeywordsFile(text: string, path: string): { keyword: string; line: number }[] {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (!/\.csv$/i.test(path)) {
    return lines.map((l, i) => ({ keyword: l.trim(), line: i + 1 })).filter((k) => k.keyword !== '' && !COMMENT.test(k.keyword));
  }
  const rows = lines.map((l, i) => ({ cells: splitCsvLine(l), line: i + 1 })).filter((r) => r.cells.some((c) => c.trim() !== ''));
  const header = rows[0]?.cells.map((c) => c.trim().toLowerCase()) ?? [];
  // The keywords' column by its header (as keyword tools export it); without one, the first
  // column, and the first row is a keyword.
  const col = header.findIndex((h) => KEYWORD_HEADERS.has(h));
  // A header naming no keywords column would otherwise be bought as a keyword ("kw,vol").
  if (col < 0 && looksLikeHeader(rows.map((r) => r.cells)))
    throw new KeywordsFileError(
      `its first line (${header.join(', ')}) is a header that names no keywords column: name that column one of ${[...KEYWORD_HEADERS].join(', ')}, or drop the header (the first column is then read)`,
    );
  const body = col >= 0 ? rows.slice(1) : rows;
  return body.map((r) => ({ keyword: (r.cells[Math.max(col, 0)] ?? '').trim(), line: r.line })).filter((k) => k.keyword !== '');
}

/**
 * Whether a CSV's first row is a header rather than keywords, as a spreadsheet export has it:
 * some column after the first holds words on the first row and numbers on every other
 * (`kw,vol` over `shoes,1200`). A file of one column cannot tell, and its first row is read as a
 * keyword, as is the first row of `running shoes,1`.
 */
function looksLikeHeader(rows: readonly string[][]): boolean {
  if (rows.length < 2) return false;
  const numeric = (c: string) => /^[-+]?\d[\d.,\s]*%?$/.test(c.trim());
  const width = Math.max(...rows.map((r) => r.length));
  for (let j = 1; j < width; j++) {
    const top = rows[0]![j]?.trim() ?? '';
    if (top === '' || numeric(top)) continue;
    const below = rows.slice(1).map((r) => r[j]?.trim() ?? '');
    if (below.some((c) => c !== '') && below.every((c) => c === '' || numeric(c))) return true;
  }
  return false;
}

/** Headers of a CSV's keywords column. */
const KEYWORD_HEADERS = new Set([
  'keyword',
  'keywords',
  'kw',
  'query',
  'queries',
  'search term',
  'search terms',
  'search query',
  'search queries',
  'search keyword',
  'search keywords',
  'keyword phrase',
  'phrase',
]);

/** One CSV line per RFC 4180 (quoted cells, doubled quotes); keywords never span lines. */
function splitCsvLine(line: string): string[] {
  const out: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      out.push(cell);
      cell = '';
    } else cell += ch;
  }
  out.push(cell);
  return out;
}

/**
 * Adds each job's `keywords_file` to its `keywords`, relative to the pipeline file. Every
 * problem (a missing file, an empty or too long keyword) is an issue with its own file and
 * line, reported with the others before anything is sent.
 */
export async function readKeywordsFiles<
  J extends { kind: string; keywords?: string[]; keywords_file?: string | undefined; keywords_file_outside?: boolean | undefined },
>(
  jobs: J[],
  pipelineFile: string,
  read: (path: string, place: KeywordsFilePlace) => Promise<string>,
): Promise<{ jobs: J[]; issues: ConfigIssue[] }> {
  const issues: ConfigIssue[] = [];
  const out: J[] = [];
  for (const [i, job] of jobs.entries()) {
    if (!job.keywords_file) {
      out.push(job);
      continue;
    }
    const baseDir = resolve(dirname(pipelineFile));
    const path = resolve(baseDir, job.keywords_file);
    const field = `jobs[${i}].keywords_file`;
    const place = { baseDir, allowOutside: job.keywords_file_outside === true };
    let text: string;
    try {
      if (!place.allowOutside && !inside(baseDir, path)) {
        throw new KeywordsFileError(
          `it is outside the pipeline file's folder (${baseDir}); set keywords_file_outside: true on the job to allow that`,
        );
      }
      text = await read(path, place);
    } catch (err) {
      if (err instanceof InvalidUtf8Error) {
        issues.push({
          file: path,
          line: err.line,
          column: err.column,
          field,
          rule: `${err.message} (named by ${field} in ${pipelineFile})`,
        });
        continue;
      }
      const why =
        err instanceof KeywordsFileError
          ? err.message
          : (err as NodeJS.ErrnoException).code === 'ENOENT'
            ? 'file not found'
            : `cannot read it: ${(err as Error).message}`;
      issues.push({ file: path, line: 1, column: 1, field, rule: `${why} (named by ${field} in ${pipelineFile})` });
      continue;
    }
    const max = keywordMaxChars(job.kind);
    let found: { keyword: string; line: number }[];
    try {
      found = parseKeywordsFile(text, path);
    } catch (err) {
      if (!(err instanceof KeywordsFileError)) throw err;
      issues.push({ file: path, line: 1, column: 1, field, rule: `${err.message} (named by ${field} in ${pipelineFile})` });
      continue;
    }
    for (const k of found) {
      const problem = keywordProblem(k.keyword);
      const chars = charCount(k.keyword);
      if (chars > max) issues.push({ file: path, line: k.line, column: 1, field, rule: `keyword of ${chars} characters; at most ${max}` });
      else if (problem) issues.push({ file: path, line: k.line, column: 1, field, rule: `keyword ${problem}` });
    }
    if (found.length === 0) issues.push({ file: path, line: 1, column: 1, field, rule: 'the file holds no keyword' });
    out.push({ ...job, keywords: [...(job.keywords ?? []), ...found.map((k) => k.keyword)] });
  }
  return { jobs: out, issues };
}

import { InvalidUtf8Error } from './read-utf8.js';
import { dirname, resolve } from 'node:path';
import type { ConfigIssue } from '../errors.js';

/**
 * Reads the keywords of a `.txt` (one a line; blank lines and `#` comments skipped) or
 * `.csv` file (the `keyword` column when the header names one, else the first column of
 * every row). Each keyword keeps its line number, so a bad one is reported where it is.
 */
export function parseKeywordsFile(text: string, path: string): { keyword: string; line: number }[] {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (!/\.csv$/i.test(path)) {
    return lines.map((l, i) => ({ keyword: l.trim(), line: i + 1 })).filter((k) => k.keyword !== '' && !k.keyword.startsWith('#'));
  }
  const rows = lines.map((l, i) => ({ cells: splitCsvLine(l), line: i + 1 })).filter((r) => r.cells.some((c) => c.trim() !== ''));
  const header = rows[0]?.cells.map((c) => c.trim().toLowerCase()) ?? [];
  const col = header.indexOf('keyword');
  const body = col >= 0 ? rows.slice(1) : rows;
  return body.map((r) => ({ keyword: (r.cells[Math.max(col, 0)] ?? '').trim(), line: r.line })).filter((k) => k.keyword !== '');
}

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
export async function readKeywordsFiles<J extends { kind: string; keywords?: string[]; keywords_file?: string | undefined }>(
  jobs: J[],
  pipelineFile: string,
  read: (path: string) => Promise<string>,
): Promise<{ jobs: J[]; issues: ConfigIssue[] }> {
  const issues: ConfigIssue[] = [];
  const out: J[] = [];
  for (const [i, job] of jobs.entries()) {
    if (!job.keywords_file) {
      out.push(job);
      continue;
    }
    const path = resolve(dirname(pipelineFile), job.keywords_file);
    const field = `jobs[${i}].keywords_file`;
    let text: string;
    try {
      text = await read(path);
    } catch (err) {
      if (err instanceof InvalidUtf8Error) {
        issues.push({ file: path, line: err.line, column: err.column, field, rule: `${err.message} (named by ${field} in ${pipelineFile})` });
        continue;
      }
      const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : `cannot read it: ${(err as Error).message}`;
      issues.push({ file: path, line: 1, column: 1, field, rule: `${why} (named by ${field} in ${pipelineFile})` });
      continue;
    }
    const max = job.kind === 'search_volume' ? 80 : 700;
    const found = parseKeywordsFile(text, path);
    for (const k of found) if (k.keyword.length > max) issues.push({ file: path, line: k.line, column: 1, field, rule: `keyword of ${k.keyword.length} characters; at most ${max}` });
    if (found.length === 0) issues.push({ file: path, line: 1, column: 1, field, rule: 'the file holds no keyword' });
    out.push({ ...job, keywords: [...(job.keywords ?? []), ...found.map((k) => k.keyword)] });
  }
  return { jobs: out, issues };
}

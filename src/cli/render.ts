/** Output formats shared by the reporting commands. */
export type Format = 'table' | 'csv' | 'json';

type Rows = readonly Record<string, unknown>[];

function text(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** Aligned columns for people; numbers and decimal strings right-aligned. */
export function renderTable(rows: Rows): string {
  if (rows.length === 0) return '(no rows)\n';
  const cols = Object.keys(rows[0]!);
  const cells = rows.map((r) => cols.map((c) => text(r[c])));
  // A fold, not Math.max(...lengths): a year's ledger (some 370,000 rows) overflows the stack as arguments.
  const width = cols.map((c, i) => cells.reduce((w, row) => Math.max(w, row[i]!.length), c.length));
  const numeric = cols.map((_, i) => cells.every((row) => row[i] === '' || /^-?\d+(\.\d+)?$/.test(row[i]!)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => (numeric[i] ? v.padStart(width[i]!) : v.padEnd(width[i]!)))
      .join('  ')
      .trimEnd();
  return [line(cols), line(width.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n') + '\n';
}

/** A cell a spreadsheet would run as a formula: it starts with `=`, `+`, `-`, `@`, tab or CR. */
const FORMULA = /^[=+\-@\t\r]/;
/** A plain number (`-0.0043`, `+12`, `1e-3`): a spreadsheet reads it as a number, never a formula. */
const NUMBER = /^[-+]?\d+(\.\d+)?([eE][-+]?\d+)?$/;

/**
 * A cell made safe to open in a spreadsheet (CSV formula injection): a text that would be
 * read as a formula gets a leading `'`, which spreadsheets show as text. Values from the
 * service (request ids, task ids, keywords) reach our CSVs, so every cell passes here;
 * plain numbers stay as they are.
 */
export function neutralizeCell(s: string): string {
  return FORMULA.test(s) && !NUMBER.test(s) ? `'${s}` : s;
}

/** RFC 4180 CSV: quoted where needed, header first; cells that would run as formulas neutralized. */
export function renderCsv(rows: Rows): string {
  if (rows.length === 0) return '';
  const cols = Object.keys(rows[0]!);
  const q = (raw: string) => {
    const s = neutralizeCell(raw);
    return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  return [cols.map(q).join(','), ...rows.map((r) => cols.map((c) => q(text(r[c]))).join(','))].join('\n') + '\n';
}

/** A JSON array; bigints become numbers when safe, decimal amounts stay strings. */
export function renderJson(rows: Rows): string {
  return `${JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? (Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()) : v), 2)}\n`;
}

export function render(rows: Rows, format: Format): string {
  return format === 'csv' ? renderCsv(rows) : format === 'json' ? renderJson(rows) : renderTable(rows);
}

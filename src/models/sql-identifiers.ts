/**
 * The lower-cased identifiers a SQL text mentions, outside comments and string literals.
 * Dependencies are read from the SQL itself (any identifier that names another model or a
 * source table), so there is no hand-kept list to fall out of date. A column that happens
 * to share a model's name would add a harmless extra edge; keep model names distinct.
 */
export function sqlIdentifiers(sql: string): Set<string> {
  const out = new Set<string>();
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i]!;
    const next = sql[i + 1];
    if (c === '-' && next === '-') {
      while (i < n && sql[i] !== '\n') i++;
    } else if (c === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === "'") {
      i++;
      while (i < n) {
        if (sql[i] === "'" && sql[i + 1] === "'") i += 2;
        else if (sql[i] === "'") break;
        else i++;
      }
      i++;
    } else if (c === '"') {
      const end = sql.indexOf('"', i + 1);
      out.add(sql.slice(i + 1, end < 0 ? n : end).toLowerCase());
      i = end < 0 ? n : end + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_$]/.test(sql[j]!)) j++;
      out.add(sql.slice(i, j).toLowerCase());
      i = j;
    } else {
      i++;
    }
  }
  return out;
}

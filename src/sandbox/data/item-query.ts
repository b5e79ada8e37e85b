/**
 * The on-page read query language: filters `[field, op, value]` joined by `"and"`/`"or"`
 * (nested lists allowed), `order_by` rules `field,asc|desc`, over items whose fields may
 * be dotted paths (`meta.title`, `checks.is_https`). The request rules (spec/limits.ts) have already
 * checked the shape; this evaluates it.
 */

/** The value at a dotted path of an item. */
export function fieldValue(item: unknown, field: string): unknown {
  let v: unknown = item;
  for (const part of field.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

function likeToRegex(pattern: string): RegExp {
  const escaped = pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/%/g, '.*');
  return new RegExp(`^${escaped}$`, 'i');
}

function condition(item: unknown, [field, op, value]: [string, string, unknown]): boolean {
  const v = fieldValue(item, field);
  switch (op) {
    case '=':
      return v === value;
    case '<>':
      return v !== value;
    case '<':
      return typeof v === 'number' && typeof value === 'number' && v < value;
    case '<=':
      return typeof v === 'number' && typeof value === 'number' && v <= value;
    case '>':
      return typeof v === 'number' && typeof value === 'number' && v > value;
    case '>=':
      return typeof v === 'number' && typeof value === 'number' && v >= value;
    case 'in':
      return Array.isArray(value) && value.includes(v);
    case 'not_in':
      return Array.isArray(value) && !value.includes(v);
    case 'like':
      return typeof v === 'string' && typeof value === 'string' && likeToRegex(value).test(v);
    case 'not_like':
      return typeof v === 'string' && typeof value === 'string' && !likeToRegex(value).test(v);
    case 'regex':
      return typeof v === 'string' && typeof value === 'string' && new RegExp(value).test(v);
    case 'not_regex':
      return typeof v === 'string' && typeof value === 'string' && !new RegExp(value).test(v);
    default:
      return false;
  }
}

/** Whether an item passes a filter expression (`and` binds as tightly as `or`: left to right). */
export function matchesFilter(item: unknown, expr: unknown): boolean {
  if (!Array.isArray(expr) || expr.length === 0) return true;
  if (typeof expr[0] === 'string' && expr.length === 3 && expr[1] !== 'and' && expr[1] !== 'or') {
    return condition(item, expr as [string, string, unknown]);
  }
  let result = matchesFilter(item, expr[0]);
  for (let i = 1; i + 1 < expr.length; i += 2) {
    const next = matchesFilter(item, expr[i + 1]);
    result = expr[i] === 'or' ? result || next : result && next;
  }
  return result;
}

/** Items sorted by up to three `field,asc|desc` rules; stable for equal keys. */
export function orderItems<T>(items: T[], rules: readonly string[] | undefined): T[] {
  if (!rules || rules.length === 0) return items;
  const parsed = rules.map((r) => {
    const [field = '', dir = 'asc'] = r.split(',');
    return { field, sign: dir === 'desc' ? -1 : 1 };
  });
  return [...items].sort((a, b) => {
    for (const { field, sign } of parsed) {
      const x = fieldValue(a, field);
      const y = fieldValue(b, field);
      if (x === y) continue;
      if (x === undefined || x === null) return 1;
      if (y === undefined || y === null) return -1;
      return (x < y ? -1 : 1) * sign;
    }
    return 0;
  });
}

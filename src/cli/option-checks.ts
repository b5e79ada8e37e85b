import { EtlError } from '../errors.js';

/** A rule for one option's value: undefined when fine, else what the option takes. */
export type OptionRule = (value: unknown) => string | undefined;

/** A number within bounds (`integer` for counts and ports). */
export function num(o: { min?: number; max?: number; integer?: boolean; above?: number }): OptionRule {
  return (v) => {
    const n = v as number;
    const ok =
      typeof n === 'number' &&
      Number.isFinite(n) &&
      (!o.integer || Number.isInteger(n)) &&
      (o.min === undefined || n >= o.min) &&
      (o.max === undefined || n <= o.max) &&
      (o.above === undefined || n > o.above);
    if (ok) return undefined;
    const kind = o.integer ? 'a whole number' : 'a number';
    const range = [
      o.above !== undefined ? `above ${o.above}` : '',
      o.min !== undefined ? `at least ${o.min}` : '',
      o.max !== undefined ? `at most ${o.max}` : '',
    ]
      .filter(Boolean)
      .join(' and ');
    return `${kind}${range ? ` ${range}` : ''}`;
  };
}

/** A text that `parse` accepts (it throws with the reason otherwise). */
export function parsedBy(parse: (text: string) => unknown, takes: string): OptionRule {
  return (v) => {
    try {
      parse(String(v));
      return undefined;
    } catch (err) {
      return `${takes} (${(err as Error).message})`;
    }
  };
}

/**
 * A yargs `.check` for a command's options: every bad value is a usage error (exit 2)
 * naming the option, the value given and what it takes, all at once, before anything runs.
 * Options left out (undefined) are not checked.
 */
export function checkOptions(rules: Record<string, OptionRule>): (args: Record<string, unknown>) => true {
  return (args) => {
    const bad: string[] = [];
    for (const [name, rule] of Object.entries(rules)) {
      const v = args[name];
      if (v === undefined) continue;
      for (const one of Array.isArray(v) ? v : [v]) {
        const takes = rule(one);
        if (takes) bad.push(`--${name} ${shown(name, one)}: takes ${takes}`);
      }
    }
    if (bad.length > 0)
      throw new EtlError(
        'ETL_CONFIG_INVALID',
        `invalid option value${bad.length > 1 ? 's' : ''}: ${bad.join('; ')}. Run with --help for usage.`,
      );
    return true;
  };
}

/** Whether `s` is a calendar day written yyyy-mm-dd (2026-02-30 and 2026-13-45 are not). */
export function isCalendarDay(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/**
 * The value as given: yargs turns a word given to a number option into NaN, which JSON writes
 * as `null`; the word is then read back from the command line.
 */
function shown(name: string, v: unknown): string {
  if (typeof v !== 'number' || !Number.isNaN(v)) return JSON.stringify(v);
  const argv = process.argv;
  const at = argv.indexOf(`--${name}`);
  const raw = at >= 0 ? argv[at + 1] : argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  return raw === undefined ? '(not a number)' : JSON.stringify(raw);
}

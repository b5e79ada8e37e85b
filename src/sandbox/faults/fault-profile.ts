/**
 * What can go wrong, and how often. Every rate is a probability per opportunity (a call,
 * a task, a callback), drawn from a stream seeded by the emulator's seed, so a failing
 * run can be replayed exactly. All rates default to 0: faults happen only when asked for.
 */
export interface FaultProfile {
  /** Chance that a call starts a burst of 429 refusals (nothing processed, nothing charged). */
  burst429: number;
  /** Length of one 429 burst, in calls; default 3. */
  burstLength: number;
  /** Chance that a call is refused with a 500/502/503 before it is processed (not charged). */
  error5xx: number;
  /** Chance that a call is processed (and charged), then answered 500 all the same: only a look-up tells what was created. */
  error5xxAfter: number;
  /** Chance that a call is refused before it is processed with HTTP 200 and a top-level 40202 (a rate limit; not charged). */
  rateLimit200: number;
  /** Chance that a call is processed (and charged) but answered only after `slowMs`. */
  slow: number;
  /** Delay of a slow answer in real milliseconds (not scaled); default 30000, past most client timeouts. */
  slowMs: number;
  /** Chance that a call is processed (and charged) and the connection is then dropped unanswered. */
  drop: number;
  /** Chance that a call is processed (and charged) and answered 200 with a truncated JSON body. */
  malformed: number;
  /** Chance that one valid task of a POST fails (40103 or 50000) and is not charged. */
  taskFailure: number;
  /** Chance that a callback is treated as failed (no answer), sending the task to the ready list. */
  callbackFailure: number;
  /** Chance that a delivered callback is sent a second time right after (the same body, the same task). */
  callbackDuplicate: number;
  /** Chance that a finished task is re-parsed shortly after and listed by `tasks_fixed`. */
  reparse: number;
}

/** No faults at all: the default. */
export const NO_FAULTS: Readonly<FaultProfile> = Object.freeze({
  burst429: 0,
  burstLength: 3,
  error5xx: 0,
  error5xxAfter: 0,
  rateLimit200: 0,
  slow: 0,
  slowMs: 30_000,
  drop: 0,
  malformed: 0,
  taskFailure: 0,
  callbackFailure: 0,
  callbackDuplicate: 0,
  reparse: 0,
});

/** Named profiles for `pipeline sandbox --faults NAME`. */
export const FAULT_PROFILES: Readonly<Record<string, Readonly<FaultProfile>>> = Object.freeze({
  none: NO_FAULTS,
  /** A service having a bad afternoon: every recovery path is exercised now and then. */
  flaky: Object.freeze({
    ...NO_FAULTS,
    burst429: 0.03,
    error5xx: 0.02,
    slow: 0.005,
    slowMs: 5_000,
    drop: 0.005,
    malformed: 0.005,
    taskFailure: 0.02,
    callbackFailure: 0.05,
    reparse: 0.02,
  }),
  /** Heavy weather, for recovery tests that must finish in a few calls. */
  chaos: Object.freeze({
    ...NO_FAULTS,
    burst429: 0.1,
    error5xx: 0.1,
    slow: 0.02,
    slowMs: 5_000,
    drop: 0.05,
    malformed: 0.05,
    taskFailure: 0.1,
    callbackFailure: 0.3,
    reparse: 0.1,
  }),
});

const KEYS = Object.keys(NO_FAULTS) as (keyof FaultProfile)[];
const RATE_KEYS = new Set<keyof FaultProfile>(KEYS.filter((k) => k !== 'burstLength' && k !== 'slowMs'));

/**
 * Reads a profile from the command line: a name (`none`, `flaky`, `chaos`), a list of
 * `field=value` (`burst429=0.2,drop=0.05`), or a name followed by overrides
 * (`flaky,slowMs=2000`). Throws with the accepted names on anything else, so a typo
 * never silently means "no faults".
 */
export function parseFaultProfile(text: string): FaultProfile {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  let profile: FaultProfile = { ...NO_FAULTS };
  parts.forEach((part, i) => {
    const eq = part.indexOf('=');
    if (eq < 0) {
      const named = FAULT_PROFILES[part];
      if (!named || i > 0) {
        throw new Error(
          `fault profile "${part}" is not known; use one of ${Object.keys(FAULT_PROFILES).join(', ')} (first), or field=value with fields ${KEYS.join(', ')}`,
        );
      }
      profile = { ...named };
      return;
    }
    const key = part.slice(0, eq).trim() as keyof FaultProfile;
    const value = Number(part.slice(eq + 1).trim());
    if (!KEYS.includes(key)) throw new Error(`fault field "${key}" is not known; fields are ${KEYS.join(', ')}`);
    profile[key] = value;
  });
  return resolveFaultProfile(profile);
}

/** Fills defaults and checks ranges: rates in [0, 1], lengths and delays non-negative integers. */
export function resolveFaultProfile(partial: Partial<FaultProfile> = {}): FaultProfile {
  const p: FaultProfile = { ...NO_FAULTS, ...partial };
  for (const k of KEYS) {
    const v = p[k];
    if (RATE_KEYS.has(k)) {
      if (!(Number.isFinite(v) && v >= 0 && v <= 1)) throw new Error(`fault rate ${k}=${v} must be a number between 0 and 1`);
    } else if (!(Number.isInteger(v) && v >= 0)) {
      throw new Error(`fault setting ${k}=${v} must be a non-negative integer`);
    }
  }
  return p;
}

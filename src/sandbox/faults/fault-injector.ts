import { createRng, type Rng } from '../prng.js';
import type { FaultProfile } from './fault-profile.js';

/** What happens to one call. `before` faults refuse it unprocessed; `after` faults mangle the answer of a processed call. */
export type CallFault =
  | { kind: 'none' }
  | { kind: 'rate_limited' }
  | { kind: 'server_error'; http: 500 | 502 | 503 }
  | { kind: 'rate_limited_200' }
  | { kind: 'server_error_after' }
  | { kind: 'slow'; delayMs: number }
  | { kind: 'drop' }
  | { kind: 'malformed' };

/**
 * Draws the faults of a profile from independent seeded streams (calls, tasks,
 * callbacks, re-parses), so the same seed and the same sequence of calls give the same
 * faults, and turning one kind of fault on does not move the others.
 */
export class FaultInjector {
  readonly #p: FaultProfile;
  readonly #calls: Rng;
  readonly #tasks: Rng;
  readonly #callbacks: Rng;
  readonly #reparse: Rng;
  readonly #duplicates: Rng;
  readonly #paths: RegExp | undefined;
  #burstLeft = 0;

  /** `paths`: only calls to matching paths draw call faults (all calls when absent). */
  constructor(profile: FaultProfile, seed: number, paths?: RegExp) {
    this.#p = profile;
    this.#paths = paths;
    this.#calls = createRng(seed, 'faults', 'calls');
    this.#tasks = createRng(seed, 'faults', 'tasks');
    this.#callbacks = createRng(seed, 'faults', 'callbacks');
    this.#reparse = createRng(seed, 'faults', 'reparse');
    this.#duplicates = createRng(seed, 'faults', 'duplicates');
  }

  /** The fault for the next call to `path`; one draw per kind, in a fixed order. */
  nextCall(path: string): CallFault {
    if (this.#paths && !this.#paths.test(path)) return { kind: 'none' };
    const p = this.#p;
    if (this.#burstLeft > 0) {
      this.#burstLeft--;
      return { kind: 'rate_limited' };
    }
    const r = this.#calls;
    if (p.burst429 > 0 && r.chance(p.burst429)) {
      this.#burstLeft = Math.max(0, p.burstLength - 1);
      return { kind: 'rate_limited' };
    }
    if (p.error5xx > 0 && r.chance(p.error5xx)) return { kind: 'server_error', http: r.pick([500, 502, 503] as const) };
    if (p.drop > 0 && r.chance(p.drop)) return { kind: 'drop' };
    if (p.rateLimit200 > 0 && r.chance(p.rateLimit200)) return { kind: 'rate_limited_200' };
    if (p.error5xxAfter > 0 && r.chance(p.error5xxAfter)) return { kind: 'server_error_after' };
    if (p.malformed > 0 && r.chance(p.malformed)) return { kind: 'malformed' };
    if (p.slow > 0 && r.chance(p.slow)) return { kind: 'slow', delayMs: p.slowMs };
    return { kind: 'none' };
  }

  /** Whether the next valid task of a batch fails (not charged). */
  nextTaskFails(): boolean {
    return this.#p.taskFailure > 0 && this.#tasks.chance(this.#p.taskFailure);
  }

  /** Whether the next callback is treated as unanswered. */
  nextCallbackFails(): boolean {
    return this.#p.callbackFailure > 0 && this.#callbacks.chance(this.#p.callbackFailure);
  }

  /** Whether the callback just delivered is sent once more. */
  nextCallbackDuplicated(): boolean {
    return this.#p.callbackDuplicate > 0 && this.#duplicates.chance(this.#p.callbackDuplicate);
  }

  /** Whether the next finished task is re-parsed. */
  nextTaskReparsed(): boolean {
    return this.#p.reparse > 0 && this.#reparse.chance(this.#p.reparse);
  }
}

import { formatCny } from './money.js';

/** The admin view's body: what the emulator saw, for tests and demos that check from outside. */
export interface AdminStatsBody {
  calls_by_family: Record<string, number>;
  tasks_created_by_tag: Record<string, number>;
  charged_cny: string;
  calls_total: number;
  status_counts: Record<string, number>;
  faults_injected: Record<string, number>;
  callbacks: { delivered: number; failed: number };
  /** Postback bodies sent as built ahead of their send (`prebuildPostbacks`), and built at their send. */
  postback_bodies: { prebuilt: number; built_at_send: number };
}

/**
 * Counters behind `GET /__admin/stats`. Money is summed in CNY units of 0.0001 (as the
 * charge headers), so `charged_cny` equals the sum of every `X-Svc-Charge-CNY` sent.
 */
export class AdminStats {
  readonly #families = new Map<string, number>();
  readonly #tags = new Map<string, number>();
  readonly #statuses = new Map<string, number>();
  readonly #faults = new Map<string, number>();
  #chargedUnits = 0;
  #calls = 0;
  #callbacksDelivered = 0;
  #callbacksFailed = 0;
  readonly #bodies = { prebuilt: 0, built_at_send: 0 };

  call(family: string, http: number, chargedUnits: number): void {
    this.#calls++;
    bump(this.#families, family);
    bump(this.#statuses, String(http));
    this.#chargedUnits += chargedUnits;
  }

  taskCreated(tag: string | null): void {
    bump(this.#tags, tag ?? '');
  }

  fault(kind: string): void {
    bump(this.#faults, kind);
  }

  callback(ok: boolean): void {
    if (ok) this.#callbacksDelivered++;
    else this.#callbacksFailed++;
  }

  postbackBody(prebuilt: boolean): void {
    if (prebuilt) this.#bodies.prebuilt++;
    else this.#bodies.built_at_send++;
  }

  body(): AdminStatsBody {
    return {
      calls_by_family: Object.fromEntries(this.#families),
      tasks_created_by_tag: Object.fromEntries(this.#tags),
      charged_cny: formatCny(this.#chargedUnits),
      calls_total: this.#calls,
      status_counts: Object.fromEntries(this.#statuses),
      faults_injected: Object.fromEntries(this.#faults),
      callbacks: { delivered: this.#callbacksDelivered, failed: this.#callbacksFailed },
      postback_bodies: { ...this.#bodies },
    };
  }
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

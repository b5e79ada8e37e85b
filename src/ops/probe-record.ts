import type { ServiceReadingsRecord } from '../warehouse/index.js';
import { cny4 } from './probe-plan.js';

/** The probe's record as written to the warehouse folder, its readings in a fixed order. */
export function probeRecord(
  baseUrl: string,
  login: string | undefined,
  chargedCny: number,
  serpTaskCny: number | null,
  readings: ServiceReadingsRecord['readings'],
  now: () => Date,
): ServiceReadingsRecord {
  const ordered = {
    refunds: readings.refunds,
    rateLimitBody: readings.rateLimitBody,
    clockSkewSeconds: readings.clockSkewSeconds,
    asyncTasksPerPost: readings.asyncTasksPerPost,
    readyListPaging: readings.readyListPaging,
    aiCodes: readings.aiCodes,
  };
  return {
    version: 1,
    probedAt: now().toISOString(),
    account: login ?? null,
    baseUrl,
    chargedCny: cny4(chargedCny),
    serpTaskCny,
    readings: ordered,
  };
}

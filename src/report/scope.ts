import type { ReportScope } from './report-context.js';

/**
 * How much of the warehouse a report shows by default: a module of its own, without the
 * report's code, so `pipeline report --help` prints these defaults without loading DuckDB.
 */
export const DEFAULT_SCOPE: ReportScope = { days: 90, topKeywords: 100, competitors: 3, visibilityDomains: 8 };

/**
 * The data the report page draws, as one JSON object inlined into the HTML. Strings that
 * repeat (keywords, domains, pipelines, dates) are listed once and referred to by index;
 * numbers are rounded to what a chart can show. The page script (page/report.js) is its
 * only reader.
 */
export interface ReportPayload {
  /** Payload layout version, for the page script. */
  v: 1;
  generatedAt: string;
  /** Pipelines in the report (index = pipeline id elsewhere). */
  pipelines: string[];
  /** Locations in the report (index = location id elsewhere). */
  locations: { code: number; name: string }[];
  domains: string[];
  /** Per pipeline id: the ids of its tracked domains. */
  tracked: number[][];
  /** Where the tracked domains came from, in words (shown on the page). */
  trackedSource: string;
  /** Per pipeline id: the location ids it collected. */
  pipelineLocations: number[][];
  keywords: KeywordIndex;
  rank: RankSection | null;
  visibility: VisibilitySection | null;
  volume: VolumeSection | null;
  clusters: ClusterSection | null;
  spend: SpendSection | null;
  /** Recent alerts (absent from payloads written before alerts existed). */
  alerts?: AlertsSection | null;
  /** What the report left out or assumed, shown at the top of the page. */
  notes: string[];
}

/** Every keyword named anywhere in the report, with what the filters need to know of it. */
export interface KeywordIndex {
  names: string[];
  /** Per keyword: pipeline ids that collected it. */
  pipelines: number[][];
  /** Per keyword: location ids it has data in. */
  locations: number[][];
  /** Per keyword: ids of the report's domains that ranked for it in the window. */
  domains: number[][];
}

export interface RankSection {
  /** Check dates of the window, `yyyy-mm-dd`. */
  dates: string[];
  /** How many keywords the report chose for rank lines, and out of how many. */
  keywordsShown: number;
  keywordsTotal: number;
  series: RankSeries[];
}

/** One keyword in one market: a line per tracked domain and closest competitor. */
export interface RankSeries {
  k: number;
  l: number;
  /** Language, device and engine, when more than one market shares a location. */
  m: string;
  p: number[];
  /** [domain id, 1 if tracked else 0, best absolute rank per date (null: not ranked or not checked)]. */
  lines: [number, 0 | 1, (number | null)[]][];
}

export interface VisibilitySection {
  dates: string[];
  /** Per location id and date: keywords checked (the denominator of visibility %). */
  checked: number[][];
  /** [domain id, location id, visibility % x keywords checked per date]. */
  series: [number, number, number[]][];
}

export interface VolumeSection {
  /** Months of the window, `yyyy-mm`. */
  months: string[];
  /** Per keyword and location: [keyword id, location id, volume per month (null: no data), peak month 1-12, 12-month slope or null, year-on-year % or null]. */
  series: [number, number, (number | null)[], number, number | null, number | null][];
}

export interface ClusterSection {
  model: string;
  dimensions: number;
  /** Per cluster: its label (or representative keyword) and size. */
  clusters: { id: number; label: string; representative: string; size: number }[];
  /** [keyword id, x, y, index into clusters]; x and y in [-1, 1]. */
  points: [number, number, number, number][];
}

export interface SpendSection {
  days: string[];
  endpoints: string[];
  /** [day index, pipeline id, endpoint index, CNY charged, calls]. */
  rows: [number, number, number, number, number][];
}

export interface AlertsSection {
  /** Alerts in the window, of which `rows` holds the newest 50. */
  total: number;
  /** [check date, pipeline id, rule, message (plain text), 1 if delivered else 0, attempts, last delivery error or null]. */
  rows: [string, number, string, string, 0 | 1, number, string | null][];
}

import type { StoredAlert } from './alert.js';

/** Lines of the digest's `text` before "and N more" (Slack cuts long messages). */
const TEXT_LINES = 40;

/** One alert as the webhook receives it. */
export interface AlertJson {
  id: string;
  rule: string;
  pipeline: string;
  subject: string;
  keyword: string | null;
  location_code: number | null;
  language_code: string | null;
  device: string | null;
  engine: string | null;
  domain: string | null;
  run_id: string | null;
  check_date: string;
  before: string | null;
  after: string | null;
  threshold: string;
  days_since_previous: number | null;
  across_gap: boolean | null;
  message: string;
}

/** The POSTed body: Slack-style `text`, and every alert as data for other receivers. */
export interface AlertPayload {
  text: string;
  alerts: AlertJson[];
}

/**
 * The body of one message: a digest of several alerts (a count, then a bullet per alert,
 * at most 40 in the text; all of them in `alerts`) or one alert's line.
 */
export function alertPayload(pipeline: string, alerts: readonly StoredAlert[]): AlertPayload {
  const n = alerts.length;
  const lines = alerts.slice(0, TEXT_LINES).map((a) => `• ${a.message}`);
  if (n > TEXT_LINES) lines.push(`…and ${n - TEXT_LINES} more (\`pipeline alerts\` lists them all)`);
  const text =
    n === 1
      ? `:rotating_light: ${pipelineTag(pipeline)} ${alerts[0]!.message}`
      : `:rotating_light: ${pipelineTag(pipeline)} ${n} alerts\n${lines.join('\n')}`;
  return { text, alerts: alerts.map(toJson) };
}

function pipelineTag(pipeline: string): string {
  return `[${pipeline}]`;
}

function toJson(a: StoredAlert): AlertJson {
  const s = a.series;
  return {
    id: a.id,
    rule: a.rule,
    pipeline: a.pipeline,
    subject: a.subject,
    keyword: s?.keyword ?? null,
    location_code: s?.locationCode ?? null,
    language_code: s?.languageCode ?? null,
    device: s?.device ?? null,
    engine: s?.engine ?? null,
    domain: s?.domain ?? null,
    run_id: a.runId,
    check_date: a.checkDate,
    before: a.before,
    after: a.after,
    threshold: a.threshold,
    days_since_previous: a.daysSincePrevious ?? null,
    across_gap: a.acrossGap ?? null,
    message: a.message,
  };
}

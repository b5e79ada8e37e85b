import { z } from 'zod';
import { ALERT_RULE_SHAPE } from '../alerts/rules/index.js';
import type { Env } from './env.js';
import type { DataPath } from './positions.js';

/**
 * The alert rules, one key each (src/alerts/rules: a module per rule and its registry). Rank
 * rules look at the tracked domains (`track_domains`) of the checks a run collected, against
 * each series' previous successful check; run rules at the run itself. The single source of
 * the rule names: the schema, the editor JSON Schema and the evaluator read this shape.
 */
export { ALERT_RULE_SHAPE };

/** Every rule name, in the order of the docs. */
export const ALERT_RULE_NAMES = Object.keys(ALERT_RULE_SHAPE) as AlertRuleName[];
export type AlertRuleName = keyof typeof ALERT_RULE_SHAPE;

/** The rules as resolved: each set rule with its value; `false` rules are left out. */
export type AlertRules = { -readonly [K in AlertRuleName]?: z.output<(typeof ALERT_RULE_SHAPE)[K]> };

const ruleItem = z
  .strictObject(
    Object.fromEntries(Object.entries(ALERT_RULE_SHAPE).map(([k, s]) => [k, s.optional()])) as {
      [K in AlertRuleName]: z.ZodOptional<(typeof ALERT_RULE_SHAPE)[K]>;
    },
    { error: (iss) => (iss.code === 'unrecognized_keys' ? `unknown rule; accepted: ${ALERT_RULE_NAMES.join(', ')}` : undefined) },
  )
  .refine((r) => Object.keys(r).length === 1, {
    error: `one rule per list item, e.g. '- rank_drop: 3'; accepted: ${ALERT_RULE_NAMES.join(', ')}`,
    // An unknown rule is already reported at its key.
    when: (payload) => payload.issues.length === 0,
  });

/** Folds the list of one-key items into one object, refusing a rule set twice. */
function foldRules(items: Array<Partial<AlertRules>>, ctx: z.RefinementCtx): AlertRules {
  const out: AlertRules = {};
  const first = new Map<string, number>();
  items.forEach((item, i) => {
    for (const [k, v] of Object.entries(item)) {
      const seen = first.get(k);
      if (seen !== undefined) {
        ctx.addIssue({ code: 'custom', path: [i, k], message: `rule ${k} is already set by rules[${seen}]` });
        continue;
      }
      first.set(k, i);
      if (v !== false) (out as Record<string, unknown>)[k] = v;
    }
  });
  return out;
}

/** An absolute http(s) URL; `${ALERTS_WEBHOOK}` is expanded before this check. */
const webhookSchema = z.string().refine(
  (s) => {
    try {
      const u = new URL(s);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
    } catch {
      return false;
    }
  },
  { error: 'an absolute http(s) URL, e.g. "${ALERTS_WEBHOOK}" or https://hooks.example.com/T000/B000' },
);

/**
 * The `alerts:` block of a pipeline: where alerts go and which rules make them. Alerts are
 * rows of the `alerts` table first, then POSTed; see `src/alerts`.
 */
export const alertsSchema = z
  .strictObject({
    webhook: webhookSchema.describe(
      'Where alerts are POSTed as JSON `{ "text": "...", "alerts": [ ... ] }` (Slack-style `text`). Usually `"${ALERTS_WEBHOOK}"`, so the URL (which often holds a token) stays out of the file.',
    ),
    secret_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name, e.g. ALERTS_SECRET')
      .optional()
      .describe(
        'Name of the environment variable holding a shared secret: each POST then carries `X-Pipeline-Signature: sha256=<hex HMAC-SHA256 of the body>`. The secret is never logged or stored.',
      ),
    digest: z.boolean().default(true).describe('true (default): one message per run holding every alert; false: one message per alert.'),
    rules: z
      .array(ruleItem)
      .min(1, 'at least one rule')
      .transform(foldRules)
      .describe(`The rules, one per list item, e.g. \`- rank_drop: 3\`. Accepted: ${ALERT_RULE_NAMES.join(', ')}.`),
  })
  .describe('Alerts on tracked ranks, spend and runs, kept in the `alerts` table and delivered once to a webhook.');

/** An `alerts:` block as resolved (digest filled, rules folded into one object). */
export type AlertsConfig = z.output<typeof alertsSchema>;

/**
 * Problems of an `alerts:` block that depend on the machine or on the rest of the file:
 * the secret variable it names must be set (it is read again at delivery), and
 * missed_nights needs a schedule. Reads the data as written (before the schema), so these
 * are reported with the schema's issues in one pass; paths are into that data.
 */
export function alertsIssues(data: unknown, env: Env): { path: DataPath; rule: string }[] {
  const top = (data ?? {}) as { schedule?: unknown; alerts?: unknown };
  if (!top.alerts || typeof top.alerts !== 'object') return [];
  const a = top.alerts as { secret_env?: unknown; rules?: unknown };
  const out: { path: DataPath; rule: string }[] = [];
  if (typeof a.secret_env === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(a.secret_env) && !env[a.secret_env]) {
    out.push({
      path: ['alerts', 'secret_env'],
      rule: `environment variable ${a.secret_env} is not set (or empty); set it, or remove secret_env to send unsigned`,
    });
  }
  if (Array.isArray(a.rules) && top.schedule === undefined) {
    const i = a.rules.findIndex(
      (r) => r !== null && typeof r === 'object' && 'missed_nights' in r && (r as { missed_nights: unknown }).missed_nights !== false,
    );
    if (i >= 0)
      out.push({ path: ['alerts', 'rules', i, 'missed_nights'], rule: 'missed_nights needs a schedule: this pipeline has no `schedule`' });
  }
  return out;
}

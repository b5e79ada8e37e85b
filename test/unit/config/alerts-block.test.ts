import { describe, expect, it } from 'vitest';
import { parsePipeline } from '../../../src/config/index.js';
import { ConfigError } from '../../../src/errors.js';

const head = `name: shop
schedule: "0 3 * * *"
jobs:
  - kind: serp
    keywords: [trail shoes]
    locations: [2840]
    track_domains: [a.com]
`;

function issuesOf(text: string, env: Record<string, string> = {}): string[] {
  try {
    parsePipeline(text, 'shop.yaml', env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.issues.map((i) => `${i.line} ${i.field}: ${i.rule}`);
  }
  return [];
}

describe('the alerts: block of a pipeline file', () => {
  it('expands the webhook from the environment, folds the rules and defaults digest to true', () => {
    const p = parsePipeline(
      `${head}alerts:
  webhook: "\${ALERTS_WEBHOOK}"
  secret_env: ALERTS_SECRET
  rules:
    - enters_top: 10
    - rank_drop: 3
    - lost: true
    - url_changed: false
    - spend_over_cny: 5
    - missed_nights: 2
`,
      'shop.yaml',
      { ALERTS_WEBHOOK: 'https://hooks.example.com/T1', ALERTS_SECRET: 's3cret' },
    );
    expect(p.alerts).toEqual({
      webhook: 'https://hooks.example.com/T1',
      secret_env: 'ALERTS_SECRET',
      digest: true,
      rules: { enters_top: 10, rank_drop: 3, lost: true, spend_over_cny: 5, missed_nights: 2 },
    });
    expect(JSON.stringify(p)).not.toContain('s3cret');
  });

  it('refuses an unknown rule, a webhook that is not http(s) and a missing secret variable, each with its line and field', () => {
    const text = `${head}alerts:
  webhook: ftp://hooks.example.com/x
  secret_env: ALERTS_SECRET
  rules:
    - enters_top: 10
    - rank_drops: 3
`;
    expect(issuesOf(text)).toEqual([
      '9 alerts.webhook: an absolute http(s) URL, e.g. "${ALERTS_WEBHOOK}" or https://hooks.example.com/T000/B000',
      '10 alerts.secret_env: environment variable ALERTS_SECRET is not set (or empty); set it, or remove secret_env to send unsigned',
      expect.stringMatching(/^13 alerts\.rules\[1\]\.rank_drops: unknown rule 'rank_drops'; accepted: enters_top, leaves_top, rank_drop/),
    ]);
  });

  it('refuses a missing webhook variable, two rules in one item, a rule set twice and missed_nights without a schedule', () => {
    const noSchedule = head.replace('schedule: "0 3 * * *"\n', '');
    expect(
      issuesOf(`${noSchedule}alerts:
  webhook: "\${HOOK}"
  rules:
    - {rank_drop: 3, rank_gain: 3}
    - missed_nights: 2
`),
    ).toEqual([
      '8 alerts.webhook: environment variable HOOK is not set (referenced as ${HOOK})',
      expect.stringMatching(/^10 alerts\.rules\[0\]: one rule per list item/),
      '11 alerts.rules[1].missed_nights: missed_nights needs a schedule: this pipeline has no `schedule`',
    ]);
    expect(
      issuesOf(`${head}alerts:
  webhook: http://127.0.0.1:9/hook
  rules:
    - lost: true
    - lost: true
    - leaves_top: 0
`),
    ).toEqual(['13 alerts.rules[2].leaves_top: at least 1']);
    expect(
      issuesOf(`${head}alerts:
  webhook: http://127.0.0.1:9/hook
  rules:
    - lost: true
    - lost: true
`),
    ).toEqual(['12 alerts.rules[1].lost: rule lost is already set by rules[0]']);
  });

  it('a pipeline without the block has no alerts', () => {
    expect(parsePipeline(head, 'shop.yaml', {}).alerts).toBeUndefined();
  });
});

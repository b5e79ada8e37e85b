import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { alertPayload, alertStep, type StoredAlert } from '../../../src/alerts/index.js';

function stored(i: number): StoredAlert {
  return {
    id: `id-${i}`,
    rule: 'rank_drop',
    pipeline: 'shop',
    subject: `kw ${i} / 2840 en / desktop / engA / a.com`,
    series: { keyword: `kw ${i}`, locationCode: 2840, languageCode: 'en', device: 'desktop', engine: 'engA', domain: 'a.com' },
    runId: 'r1',
    checkDate: '2026-01-02',
    before: '#4',
    after: '#9',
    threshold: '3',
    daysSincePrevious: 1,
    acrossGap: false,
    message: `*a.com* dropped 5 places for "kw ${i}"`,
    createdAt: '2026-01-02 03:10:00+00',
    deliveryState: 'pending',
    attempts: 0,
    lastAttemptAt: null,
    lastError: null,
    deliveredAt: null,
  };
}

describe('alertPayload', () => {
  it('one alert is one line; a digest counts them, lists 40 in the text and every one in alerts', () => {
    expect(alertPayload('shop', [stored(1)]).text).toBe(':rotating_light: [shop] *a.com* dropped 5 places for "kw 1"');
    const many = alertPayload(
      'shop',
      Array.from({ length: 45 }, (_, i) => stored(i)),
    );
    const lines = many.text.split('\n');
    expect(lines[0]).toBe(':rotating_light: [shop] 45 alerts');
    expect(lines).toHaveLength(1 + 40 + 1);
    expect(lines.at(-1)).toBe('…and 5 more (`pipeline alerts` lists them all)');
    expect(many.alerts).toHaveLength(45);
    expect(many.alerts[3]).toMatchObject({
      id: 'id-3',
      rule: 'rank_drop',
      keyword: 'kw 3',
      location_code: 2840,
      before: '#4',
      after: '#9',
      across_gap: false,
    });
  });
});

describe('alertStep', () => {
  it('a pipeline without an alerts block is skipped without touching the warehouse', async () => {
    const out = await alertStep({
      wh: undefined as never,
      pipeline: { name: 'shop', timezone: 'UTC' },
      runId: 'r1',
      runState: 'failed',
      stopReason: 'boom',
      estimateCny: null,
      now: () => new Date(),
      logger: pino({ level: 'silent' }),
    });
    expect(out).toEqual({ status: 'skipped', found: 0, created: 0, delivered: 0, pending: 0, deliveryError: null });
  });
});

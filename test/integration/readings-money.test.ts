import { describe, expect, it } from 'vitest';
import { runPipeline } from '../../src/run/index.js';
import { fromMicros, toMicros } from '../../src/run/money.js';
import { reindexRaw, withWarehouse } from '../../src/warehouse/index.js';
import { READING_COMBOS, readingsNight, stats } from './readings-helpers.js';

/** The cheapest money test under every switchable reading (readings-helpers.ts). */
describe.each(READING_COMBOS)('under refunds=$refunds, rateLimitBody=$rateLimitBody', (readings) => {
  const { t, base, moneyChecks } = readingsNight(readings);

  it('money: the night is charged what left the balance, reconcile is clean, nothing is bought twice or failed', async () => {
    const summary = await runPipeline(base(t.sandbox.url));
    expect(summary.state).toBe('completed');
    expect(summary.tasks).toMatchObject({ collected: 3, failed: 0 });
    expect(summary.chargedCny).toBe(fromMicros(toMicros('1000') - toMicros(t.sandbox.balanceCny())));
    // The tight limit did refuse calls, in the reading's body.
    const refused = await withWarehouse(t.tmp.dir, async (wh) => {
      const [r] = await wh.all<{ n: number }>(
        `SELECT count(*)::INT AS n FROM read_json('${wh.dir}/raw/**/*.gz', format = 'newline_delimited', columns = {body: 'VARCHAR'})
         WHERE body LIKE '%"status_code":40202%'`,
      );
      return r!.n;
    });
    expect(refused).toBeGreaterThan(0);
    if (readings.rateLimitBody === 'http429') expect((await stats(t.sandbox)).status_counts['429']).toBe(refused);
    await moneyChecks(summary.runId);
    // A reindex after a crash rebuilds the same ledger from the landed bodies, refunds included.
    await withWarehouse(t.tmp.dir, async (wh) => {
      const before = await wh.all(`SELECT call_id, charge_cny::VARCHAR AS c FROM ledger WHERE task_id IS NOT NULL ORDER BY call_id`);
      await wh.run(`DELETE FROM ledger`);
      await wh.run(`DELETE FROM raw_responses`);
      await reindexRaw(wh);
      expect(await wh.all(`SELECT call_id, charge_cny::VARCHAR AS c FROM ledger WHERE task_id IS NOT NULL ORDER BY call_id`)).toEqual(
        before,
      );
      const [n] = await wh.all<{ net: string }>(`SELECT sum(charge_cny)::VARCHAR AS net FROM ledger`);
      expect(n!.net).toBe(summary.chargedCny);
    });
  });
});

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetch } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { runModels } from '../../src/models/index.js';
import { DEFAULT_SANDBOX_KEY, startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { UNSEEN_ITEM_TYPES } from '../../src/sandbox/serp-drift.js';
import { loadLanded, Warehouse, withWarehouse } from '../../src/warehouse/index.js';
import { land, response } from '../unit/warehouse/helpers.js';

type Json = any; // envelopes are read field by field
const PATH = '/v3/serp/engA/organic/live/advanced';

describe('the emulator drifts now and then, and a night survives it', () => {
  let sb: SandboxHandle | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await sb?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('every served item lands, the unseen types are warned with their counts, model tests pass, and they place as non-organic', async () => {
    sb = await startSandbox({ seed: 5, drift: 0.1, now: () => new Date('2026-06-01T08:00:00Z') });
    dir = await mkdtemp(join(tmpdir(), 'pipeline-drift-'));
    const bodies: string[] = [];
    for (let i = 0; i < 60; i++) {
      const res = await fetch(`${sb.url}${PATH}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${DEFAULT_SANDBOX_KEY}`, 'Content-Type': 'application/json' },
        body: JSON.stringify([{ keyword: `hiking boots ${i}`, location_code: 2840, language_code: 'en' }]),
      });
      bodies.push(await res.text());
    }
    const served: Json[] = bodies.flatMap((b) => JSON.parse(b).tasks[0].result[0].items);
    const unseen = new Map<string, number>();
    for (const i of served)
      if ((UNSEEN_ITEM_TYPES as readonly string[]).includes(i.type)) unseen.set(i.type, (unseen.get(i.type) ?? 0) + 1);
    expect(unseen.size).toBeGreaterThan(0);
    expect(served.some((i) => typeof i.rank_absolute === 'string')).toBe(true);

    const wh = await Warehouse.open(dir);
    try {
      await loadLanded(wh, { callIds: await land(wh, ...bodies.map((b) => response(PATH, b, { method: 'POST' }))) });
    } finally {
      wh.close();
    }
    const models = await runModels({ warehouseDir: dir, test: true });
    expect(models.ok).toBe(true);
    expect(models.tests.filter((t) => t.status === 'failed' || t.status === 'error')).toEqual([]);
    const warned = models.tests.filter((t) => t.status === 'warned');
    expect(warned).toHaveLength(1);
    const sample = new Map(warned[0]!.sample.map((r) => [String(r.item_type), Number(r.rows)]));
    expect(sample).toEqual(unseen);

    await withWarehouse(dir, async (db) => {
      const [n] = await db.all<{ n: number; ranked: number }>(
        `select count(*)::int as n, count(rank_absolute)::int as ranked from serp_items`,
      );
      expect(n).toEqual({ n: served.length, ranked: served.length });
      const placed = await db.all<{ item_type: string; is_organic: boolean }>(
        `select distinct item_type, is_organic from rank_history where item_type in (${[...unseen.keys()].map((t) => `'${t}'`).join(', ')})`,
      );
      expect(placed.length).toBeGreaterThan(0);
      expect(placed.every((p) => p.is_organic === false)).toBe(true);
    });
  });
});

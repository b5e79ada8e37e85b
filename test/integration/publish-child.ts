/**
 * Child processes of test/integration/publish.test.ts (run with `node --import tsx`):
 * - `publish DIR STEP`: publishes, and stops for good at STEP (`staged`, `committed`), saying
 *   `at STEP` on stdout, so the parent kills it with SIGKILL there;
 * - `hold DIR`: holds DIR/warehouse.duckdb read-only (a notebook) until stdin says `release`;
 * - `reader DIR`: holds DIR/serving.duckdb read-only from another cwd; each `count` line on
 *   stdin answers the rows of serp_items and ledger as one JSON line.
 */
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { publish, Warehouse } from '../../src/warehouse/index.js';

const [mode, dir, arg] = process.argv.slice(2) as [string, string, string | undefined];
const lines = createInterface({ input: process.stdin });

if (mode === 'publish') {
  const wh = await Warehouse.open(dir);
  await publish(wh, {
    onStep: async (step) => {
      if (step !== arg) return;
      process.stdout.write(`at ${step}\n`);
      setInterval(() => {}, 1000);
      await new Promise(() => {});
    },
  });
  process.stdout.write('done\n');
  wh.close();
  process.exit(0);
} else if (mode === 'hold') {
  const db = await DuckDBInstance.create(join(dir, 'warehouse.duckdb'), { access_mode: 'READ_ONLY' });
  process.stdout.write('holding\n');
  for await (const line of lines) {
    if (line === 'release') {
      db.closeSync();
      process.stdout.write('released\n');
      process.exit(0);
    }
  }
} else if (mode === 'reader') {
  process.chdir('/');
  const db = await DuckDBInstance.create(join(dir, 'serving.duckdb'), { access_mode: 'READ_ONLY' });
  // A BI reader as one opens the catalog: in another folder, with no setting.
  const c = await db.connect();
  process.stdout.write('ready\n');
  for await (const line of lines) {
    if (line === 'quit') process.exit(0);
    try {
      const r = await c.runAndReadAll(
        `SELECT (SELECT count(*) FROM serp_items)::INT AS items, (SELECT count(*) FROM ledger)::INT AS ledger, (SELECT max(seq) FROM published)::INT AS seq`,
      );
      process.stdout.write(`${JSON.stringify(r.getRowObjectsJS()[0])}\n`);
    } catch (err) {
      process.stdout.write(`${JSON.stringify({ error: (err as Error).message })}\n`);
    }
  }
}

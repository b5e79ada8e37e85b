import { cp, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildModels, DEFAULT_SQL_DIR, discoverModels, ensurePublishedModelsRecorded } from '../../src/models/index.js';
import { publish, Warehouse } from '../../src/warehouse/index.js';
import { tempDir } from './helpers.js';

const MART_SQL = `-- A mart added by a user: nothing else is edited.
select 'a' as name, date '2026-11-20' as seen_date, 1 as n,
union all
select 'b', date '2026-11-21', 2,
`;
const MART_YML = `grain: one row per name
partition_by: seen_date
columns:
  name: { type: VARCHAR, description: "a name" }
  seen_date: { type: DATE, description: "its day" }
  n: { type: INTEGER, description: "a count" }
tests:
  - unique: [name]
`;

describe('a mart is published by its .sql and .yml alone (docs/architecture.md, "where to add a mart")', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let sql: string;
  let wh: Warehouse;
  beforeEach(async () => {
    tmp = await tempDir('pipeline-new-mart-');
    sql = join(tmp.dir, 'sql');
    await cp(DEFAULT_SQL_DIR, sql, { recursive: true });
    await writeFile(join(sql, 'marts', 'zz_added.sql'), MART_SQL);
    await writeFile(join(sql, 'marts', 'zz_added.yml'), MART_YML);
    wh = await Warehouse.open(join(tmp.dir, 'warehouse'));
  });
  afterEach(async () => {
    wh.close();
    await tmp.cleanup();
  });

  it('is built, listed in published_relations with its partition column, and written to parquet/<mart>/date=<day>/', async () => {
    const built = await buildModels(wh, await discoverModels(sql));
    expect(built.find((r) => r.name === 'zz_added')?.status).toBe('built');
    const listed = await wh.all<{ name: string; partition_by: string | null }>(
      `select name, partition_by from published_relations order by name`,
    );
    expect(listed).toContainEqual({ name: 'zz_added', partition_by: 'seen_date' });
    expect(listed).toContainEqual({ name: 'rank_history', partition_by: 'check_date' });
    await publish(wh, { now: () => new Date('2026-11-21T10:00:00Z') });
    expect((await readdir(join(wh.dir, 'parquet', 'zz_added'))).sort()).toEqual(['date=2026-11-20', 'date=2026-11-21']);
  });

  it('leaves the list when its files leave sql/marts; an empty list (an older warehouse) is filled before a publish', async () => {
    await buildModels(wh, await discoverModels(sql));
    await rm(join(sql, 'marts', 'zz_added.sql'));
    await rm(join(sql, 'marts', 'zz_added.yml'));
    await buildModels(wh, await discoverModels(sql));
    const names = (await wh.all<{ name: string }>(`select name from published_relations`)).map((r) => r.name);
    expect(names).not.toContain('zz_added');
    expect(names).toEqual(expect.arrayContaining(['rank_history', 'spend_daily', 'keyword_clusters', 'keyword_embeddings']));

    await wh.run(`delete from published_relations`);
    await ensurePublishedModelsRecorded(wh, DEFAULT_SQL_DIR);
    const refilled = await wh.all<{ name: string; partition_by: string | null }>(
      `select name, partition_by from published_relations order by name`,
    );
    expect(refilled).toContainEqual({ name: 'spend_daily', partition_by: 'call_date' });
    expect(refilled).toContainEqual({ name: 'keyword_embeddings', partition_by: 'embedded_at' });
    expect(refilled.map((r) => r.name)).not.toContain('keyword_cluster_labels');
  });
});

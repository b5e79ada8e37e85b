import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import { sqlString } from '../columns.js';
import { SERVING_FILE } from './serving-catalog.js';

/** What a query of the serving catalog runs on: the Warehouse's `all` and `run`, over the published views. */
export interface ServingReader {
  all<T = Record<string, unknown>>(sql: string, params?: DuckDBValue[]): Promise<T[]>;
  run(sql: string, params?: DuckDBValue[]): Promise<void>;
}

/** The publish a serving catalog holds. */
export interface ServingPublish {
  seq: number;
  /** ISO time of the publish. */
  publishedAt: string;
}

/**
 * Runs `fn` over `serving.duckdb` of the warehouse in `dir`, read-only, as a BI reader would
 * (file_search_path at the folder, times in UTC): for a command that must not wait for a run
 * holding `warehouse.duckdb`. Undefined when nothing was published yet.
 */
export async function readServing<T>(dir: string, fn: (db: ServingReader, publish: ServingPublish) => Promise<T>): Promise<T | undefined> {
  const root = resolve(dir);
  const file = join(root, SERVING_FILE);
  if (!existsSync(file)) return undefined;
  const instance = await DuckDBInstance.create(':memory:');
  try {
    const conn = await instance.connect();
    try {
      await conn.run(`SET TimeZone = 'UTC'`);
      await conn.run(`SET file_search_path = ${sqlString(root)}`);
      await conn.run(`ATTACH ${sqlString(file)} AS serving (READ_ONLY)`);
      await conn.run('USE serving');
      const db: ServingReader = {
        all: async <R>(sql: string, params?: DuckDBValue[]) => (await conn.runAndReadAll(sql, params)).getRowObjectsJS() as R[],
        run: async (sql: string, params?: DuckDBValue[]) => void (await conn.run(sql, params)),
      };
      const [p] = await db.all<{ seq: number; at: string }>(
        `SELECT seq, strftime(published_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') AS at FROM published`,
      );
      return await fn(db, { seq: p!.seq, publishedAt: p!.at });
    } finally {
      conn.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

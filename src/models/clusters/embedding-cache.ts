import { EtlError } from '../../errors.js';
import type { Warehouse } from '../../warehouse/index.js';
import { createTableSql, KEYWORD_EMBEDDINGS } from './cluster-tables.js';

/**
 * Turns texts into vectors: in production one `/v1/embeddings` call through the client
 * (batched input, `dimensions`, ledger row per call); in tests a local function. Passed
 * in, so this module never knows about HTTP.
 */
export type EmbedFn = (texts: string[]) => Promise<Float32Array[]> | Float32Array[];

export interface EmbedOptions {
  /** Embedding model name, part of the cache key. */
  model: string;
  /** Output dimensions, part of the cache key. */
  dimensions: number;
  embed: EmbedFn;
  /** Texts per embed call (default 100). */
  batchSize?: number;
  now?: () => Date;
}

export interface EmbedResult {
  vectors: Map<string, Float32Array>;
  /** Texts found in the cache. */
  cached: number;
  /** Texts embedded now (and stored). */
  embedded: number;
  /** Embed calls made. */
  calls: number;
}

/**
 * `keyword_embeddings` is the cache: one row per model, dimensions and text. Created here
 * if the warehouse does not have it yet (a variable-length FLOAT[], so one table holds any
 * dimensions).
 */
export async function ensureEmbeddingTable(wh: Warehouse): Promise<void> {
  await wh.run(createTableSql(KEYWORD_EMBEDDINGS, 'if not exists'));
}

/**
 * Vectors for every text, from the cache where present; the rest are embedded in batches
 * and each batch is stored as soon as it returns, so a paid embedding is never lost and
 * never bought twice.
 */
export async function embedWithCache(wh: Warehouse, texts: readonly string[], opts: EmbedOptions): Promise<EmbedResult> {
  await ensureEmbeddingTable(wh);
  const wanted = [...new Set(texts)];
  const vectors = new Map<string, Float32Array>();
  const rows = await wh.all<{ keyword: string; embedding: number[] }>(
    `select keyword, embedding::float[] as embedding from keyword_embeddings where model = ? and dimensions = ?`,
    [opts.model, opts.dimensions],
  );
  const want = new Set(wanted);
  for (const r of rows) if (want.has(r.keyword)) vectors.set(r.keyword, Float32Array.from(r.embedding));
  const cached = vectors.size;
  const missing = wanted.filter((t) => !vectors.has(t));
  const size = opts.batchSize ?? 100;
  let calls = 0;
  for (let i = 0; i < missing.length; i += size) {
    const batch = missing.slice(i, i + size);
    const out = await opts.embed(batch);
    calls++;
    if (out.length !== batch.length) {
      throw new EtlError(
        'ETL_SERVICE_ERROR',
        `embedding call returned ${out.length} vectors for ${batch.length} texts (model ${opts.model}); nothing of this batch was stored, ${i} texts before it were`,
        { context: { stage: 'models' } },
      );
    }
    const bad = out.findIndex((v) => v.length !== opts.dimensions);
    if (bad >= 0) {
      throw new EtlError(
        'ETL_SERVICE_ERROR',
        `embedding of "${batch[bad]}" has ${out[bad]!.length} dimensions, expected ${opts.dimensions} (model ${opts.model})`,
        { context: { stage: 'models' } },
      );
    }
    const at = (opts.now ?? (() => new Date()))().toISOString();
    await wh.transaction(async () => {
      for (const [j, text] of batch.entries()) {
        await wh.run(
          `insert into keyword_embeddings (keyword, model, dimensions, embedding, embedded_at) values (?, ?, ?, ?::float[], ?::timestamptz)`,
          [
            text,
            opts.model,
            opts.dimensions,
            // As text cast by DuckDB: a bound list takes its element type from its first value,
            // so a vector starting with an exact 0 would be typed INTEGER and refused.
            JSON.stringify(Array.from(out[j]!)),
            at,
          ],
        );
      }
    });
    batch.forEach((t, j) => vectors.set(t, out[j]!));
  }
  return { vectors, cached, embedded: missing.length, calls };
}

/**
 * The texts the cache holds, per `model\0dimensions`; empty when the warehouse has no
 * cache yet (read without creating it, so `pipeline plan` writes nothing).
 */
export async function cachedEmbeddingKeys(wh: Warehouse): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  const [t] = await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM duckdb_tables() WHERE table_name = 'keyword_embeddings'`);
  if (!t || t.n === 0) return out;
  for (const r of await wh.all<{ keyword: string; model: string; dimensions: number }>(
    `SELECT DISTINCT keyword, model, dimensions FROM keyword_embeddings`,
  )) {
    const key = `${r.model}\0${r.dimensions}`;
    if (!out.has(key)) out.set(key, new Set());
    out.get(key)!.add(r.keyword);
  }
  return out;
}

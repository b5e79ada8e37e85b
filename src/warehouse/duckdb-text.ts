import { createRequire } from 'node:module';

/**
 * `@duckdb/node-api` (1.5.5-r.5) turns DuckDB's text into JavaScript strings with a default
 * `TextDecoder`, which drops a leading U+FEFF: DuckDB holds `'\uFEFFshoes'`, JavaScript is handed
 * `'shoes'`. A value read back to be matched against what was written then misses. The
 * embeddings cache did so: a keyword that begins with U+FEFF was never found in it, and was
 * bought again at every run. The package's decoder is replaced, process-wide, by one that keeps
 * the mark; the rest of the decoding is the same (UTF-8, invalid bytes as U+FFFD). The package
 * reads the decoder from its module's exports at each call, so the replacement holds for
 * every connection. Should a later version move it, nothing is replaced and the test of the
 * cache (test/unit/warehouse/duckdb-text.test.ts) fails.
 */
export function keepByteOrderMarks(): void {
  type Accessors = { textDecoder?: { readonly ignoreBOM: boolean; decode(b: Uint8Array): string } };
  let accessors: Accessors;
  try {
    accessors = createRequire(import.meta.url)('@duckdb/node-api/lib/vectors/dataAccessors.js') as Accessors;
  } catch {
    return;
  }
  if (accessors.textDecoder && !accessors.textDecoder.ignoreBOM) accessors.textDecoder = new TextDecoder('utf-8', { ignoreBOM: true });
}

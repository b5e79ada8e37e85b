import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | undefined;

/**
 * A full V8 collection, run between a run's steps, and by the collector's loader after each
 * mid-night compaction (load-batcher.ts: every 2,000 postbacks loaded). What a step leaves in the JavaScript heap
 * is garbage once it returns (the ingest's response bodies, parsed envelopes, plans), but V8
 * collects it only when the heap next grows past its limit, which after a night's ingest is
 * far off: after a large night's ingest the heap is mostly garbage. Left there, it would stay
 * under the models, the publish and the checkpoint, whose DuckDB memory comes on top of it
 * (docs/warehouse.md, "Checkpoints"; the figures: docs/performance.md).
 *
 * Node exposes `gc` only under `--expose-gc`; setting the flag at run time and taking the
 * function from a fresh context is how jest's leak detector does it.
 */
export function collectGarbage(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}

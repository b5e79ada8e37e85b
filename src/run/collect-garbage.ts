import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | undefined;

/**
 * A full V8 collection, run between a run's steps. What a step leaves in the JavaScript heap
 * is garbage once it returns (the ingest's response bodies, parsed envelopes, plans), but V8
 * collects it only when the heap next grows past its limit, which after a night's ingest is
 * far off: on a 1,000-keyword night the heap held 150 to 250 MB, nearly all of it garbage (a
 * heap snapshot then, which collects first, was 33 MB). That garbage stayed under the models,
 * the publish and the checkpoint, whose DuckDB memory comes on top of it. With it collected
 * (and DuckDB's memory handed back), the 365th night of bench/night.ts set its peak after the
 * ingest in one pair of five, below the other pairs' peaks (docs/warehouse.md, "Checkpoints").
 *
 * Node exposes `gc` only under `--expose-gc`; setting the flag at run time and taking the
 * function from a fresh context is how jest's leak detector does it. A collection took 26 to
 * 32 ms on the 365th night.
 */
export function collectGarbage(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}

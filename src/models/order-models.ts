import { EtlError } from '../errors.js';
import type { Model } from './model.js';

/**
 * Models in build order: every model after the models it reads (Kahn's algorithm, ties
 * by name so the order is stable). A cycle is an error naming the models in it.
 */
export function orderModels(models: readonly Model[]): Model[] {
  const byName = new Map(models.map((m) => [m.name, m]));
  const indegree = new Map(models.map((m) => [m.name, m.dependsOn.filter((d) => byName.has(d)).length]));
  const readers = new Map<string, string[]>();
  for (const m of models) for (const d of m.dependsOn) readers.set(d, [...(readers.get(d) ?? []), m.name]);
  const ready = models
    .filter((m) => indegree.get(m.name) === 0)
    .map((m) => m.name)
    .sort();
  const out: Model[] = [];
  while (ready.length > 0) {
    const name = ready.shift()!;
    out.push(byName.get(name)!);
    for (const r of readers.get(name) ?? []) {
      const left = indegree.get(r)! - 1;
      indegree.set(r, left);
      if (left === 0) {
        ready.push(r);
        ready.sort();
      }
    }
  }
  if (out.length < models.length) {
    const stuck = models.filter((m) => !out.includes(m)).map((m) => m.name);
    throw new EtlError('ETL_CONFIG_INVALID', `models depend on each other in a cycle: ${stuck.join(', ')}`, {
      context: { stage: 'models' },
    });
  }
  return out;
}

/** The models named plus everything they read, transitively (for `--select`). */
export function withUpstream(models: readonly Model[], names: readonly string[]): Set<string> {
  const byName = new Map(models.map((m) => [m.name, m]));
  const out = new Set<string>();
  const visit = (n: string) => {
    if (out.has(n)) return;
    const m = byName.get(n);
    if (!m)
      throw new EtlError('ETL_CONFIG_INVALID', `no model named ${n}; known: ${[...byName.keys()].sort().join(', ')}`, {
        context: { stage: 'models' },
      });
    out.add(n);
    m.dependsOn.forEach(visit);
  };
  names.forEach(visit);
  return out;
}

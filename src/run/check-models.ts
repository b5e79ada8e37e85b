import { endpoint } from '../catalog/index.js';
import type { ServiceClient } from '../client/index.js';
import type { Pipeline } from '../config/index.js';
import { positionsIn } from '../config/positions.js';
import { ConfigError } from '../errors.js';

/**
 * The model names the service offers, read from `llm_responses/models` (free). The spec
 * does not show that list's shape, so every `model_name`, `latest_version` and `versions`
 * string of its result items counts (a base name selects its latest version). Empty when
 * the list holds none of them.
 */
export async function offeredLlmModels(client: ServiceClient): Promise<{ names: Set<string>; bases: string[]; reasoning: Set<string> }> {
  const call = await client.call(endpoint('ai_optimization.chat_llm.llm_responses.models'));
  const names = new Set<string>();
  const bases: string[] = [];
  // Names (base and versions) of the models the list itself flags as reasoning: the only
  // source we trust for it (a name like 'o1' or 'thinking' proves nothing either way).
  const reasoning = new Set<string>();
  for (const t of call.envelope.tasks ?? []) {
    for (const item of t.result ?? []) {
      const m = item as { model_name?: unknown; latest_version?: unknown; versions?: unknown; reasoning?: unknown } | null;
      const all: string[] = [];
      if (typeof m?.model_name === 'string') {
        all.push(m.model_name);
        bases.push(m.model_name);
      }
      if (typeof m?.latest_version === 'string') all.push(m.latest_version);
      if (Array.isArray(m?.versions)) for (const v of m.versions) if (typeof v === 'string') all.push(v);
      for (const n of all) {
        names.add(n);
        if (m?.reasoning === true) reasoning.add(n);
      }
    }
  }
  return { names, bases, reasoning };
}

/**
 * Refuses, before anything is bought, the models of `llm_responses` jobs that the service
 * does not offer: each one with the file, line and field, and the names it does offer.
 * The service would refuse each such request with 40501 after the others were paid for.
 * Returns a warning instead when the list could not be read (the service then decides).
 */
export async function checkLlmModels(client: ServiceClient, pipeline: Pipeline, file: string): Promise<string | null> {
  const wanted = pipeline.jobs.flatMap((j, job) => (j.kind === 'llm_responses' ? j.models.map((model, i) => ({ job, i, model })) : []));
  if (wanted.length === 0) return null;
  const { names, bases, reasoning } = await offeredLlmModels(client);
  if (names.size === 0) return 'the llm_responses models list named no model; model names are left to the service to check';
  const unknown = wanted.filter((w) => !names.has(w.model));
  const issues: { path: (string | number)[]; field: string; rule: string }[] = unknown.map((w) => ({
    path: ['jobs', w.job, 'models', w.i],
    field: `jobs[${w.job}].models[${w.i}]`,
    rule: `model '${w.model}' is not offered by the service (llm_responses/models lists ${bases.join(', ')}); nothing was posted`,
  }));
  // Reasoning models (by the list's flag) take at least 1024 output tokens and no temperature.
  for (const [job, j] of pipeline.jobs.entries()) {
    if (j.kind !== 'llm_responses') continue;
    const reasoners = j.models.filter((m) => reasoning.has(m));
    if (reasoners.length === 0) continue;
    const which = `reasoning model${reasoners.length > 1 ? 's' : ''} ${reasoners.map((m) => `'${m}'`).join(', ')} (flagged so by llm_responses/models)`;
    if (j.max_output_tokens !== undefined && j.max_output_tokens < 1024) {
      issues.push({
        path: ['jobs', job, 'max_output_tokens'],
        field: `jobs[${job}].max_output_tokens`,
        rule: `${j.max_output_tokens} is below the 1024 the ${which} need; nothing was posted`,
      });
    }
    const params = (j.params ?? {}) as Record<string, unknown>;
    if (params.temperature !== undefined) {
      issues.push({
        path: ['jobs', job, 'params', 'temperature'],
        field: `jobs[${job}].params.temperature`,
        rule: `not supported by the ${which}; nothing was posted`,
      });
    }
  }
  if (issues.length === 0) return null;
  const where = await positionsIn(file);
  throw new ConfigError(issues.map((i) => ({ file, ...(where?.(i.path) ?? { line: 0, column: 0 }), field: i.field, rule: i.rule })));
}

import { readFile } from 'node:fs/promises';
import { LineCounter, parseDocument } from 'yaml';
import { endpoint } from '../catalog/index.js';
import type { ServiceClient } from '../client/index.js';
import type { Pipeline } from '../config/index.js';
import { locate, type Position } from '../config/positions.js';
import { ConfigError } from '../errors.js';

/**
 * The model names the service offers, read from `llm_responses/models` (free). The spec
 * does not show that list's shape, so every `model_name`, `latest_version` and `versions`
 * string of its result items counts (a base name selects its latest version). Empty when
 * the list holds none of them.
 */
export async function offeredLlmModels(client: ServiceClient): Promise<{ names: Set<string>; bases: string[] }> {
  const call = await client.call(endpoint('ai_optimization.chat_llm.llm_responses.models'));
  const names = new Set<string>();
  const bases: string[] = [];
  for (const t of call.envelope.tasks ?? []) {
    for (const item of t.result ?? []) {
      const m = item as { model_name?: unknown; latest_version?: unknown; versions?: unknown } | null;
      if (typeof m?.model_name === 'string') {
        names.add(m.model_name);
        bases.push(m.model_name);
      }
      if (typeof m?.latest_version === 'string') names.add(m.latest_version);
      if (Array.isArray(m?.versions)) for (const v of m.versions) if (typeof v === 'string') names.add(v);
    }
  }
  return { names, bases };
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
  const { names, bases } = await offeredLlmModels(client);
  if (names.size === 0) return 'the llm_responses models list named no model; model names are left to the service to check';
  const unknown = wanted.filter((w) => !names.has(w.model));
  if (unknown.length === 0) return null;
  const where = await positions(file);
  throw new ConfigError(
    unknown.map((w) => ({
      file,
      ...(where?.([`jobs`, w.job, 'models', w.i]) ?? { line: 0, column: 0 }),
      field: `jobs[${w.job}].models[${w.i}]`,
      rule: `model '${w.model}' is not offered by the service (llm_responses/models lists ${bases.join(', ')}); nothing was posted`,
    })),
  );
}

/** Finds data paths in the pipeline file, when it can be read. */
async function positions(file: string): Promise<((path: (string | number)[]) => Position) | undefined> {
  try {
    const lines = new LineCounter();
    const doc = parseDocument(await readFile(file, 'utf8'), { lineCounter: lines });
    return (path) => locate(doc, lines, path);
  } catch {
    return undefined;
  }
}

import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, extname, join, relative, resolve, sep } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { EtlError } from '../errors.js';
import type { Materialization, Model } from './model.js';
import { sidecarSchema, type Sidecar } from './sidecar.js';
import { sqlIdentifiers } from './sql-identifiers.js';
import { IN_SLICE, renderTemplate } from './render-sql.js';

async function walk(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const out: string[] = [];
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p)));
    else out.push(p);
  }
  return out.sort();
}

async function readSidecar(file: string): Promise<Sidecar> {
  const yml = file.slice(0, -extname(file).length) + '.yml';
  let text: string;
  try {
    text = await readFile(yml, 'utf8');
  } catch {
    throw new EtlError('ETL_CONFIG_INVALID', `model ${basename(file)} has no sidecar: expected ${yml} stating at least its grain`, {
      context: { stage: 'models', path: yml },
    });
  }
  const parsed = sidecarSchema.safeParse(parseYaml(text));
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => `${i.path.join('.') || '(file)'}: ${i.message}`).join('; ');
    throw new EtlError('ETL_CONFIG_INVALID', `sidecar ${yml} is invalid: ${why}`, { context: { stage: 'models', path: yml } });
  }
  return parsed.data;
}

function defaultMaterialization(layer: string, sidecar: Sidecar, isSeed: boolean): Materialization {
  if (isSeed) return 'seed';
  if (sidecar.materialized) return sidecar.materialized;
  return layer === 'staging' || layer === 'intermediate' ? 'view' : 'table';
}

/**
 * Every model under `sqlDir`: `*.sql` files and seed `*.csv` files, each with a `.yml`
 * sidecar. Dependencies between models are found from the SQL text (both branches of
 * any `{% if is_incremental %}` block); errors name the file.
 */
export async function discoverModels(sqlDir: string): Promise<Model[]> {
  const root = resolve(sqlDir);
  // What discovery reads: the models, the seeds and their sidecars (an editor's temp file is not).
  const all = (await walk(root)).filter((f) => /\.(sql|csv|yml)$/.test(f));
  // A process that runs many nights (the scheduler, the tests) parses the folder once while no
  // file in it changes: the key is every file's path, size, modification time and inode.
  const stamps = await Promise.all(
    all.map((f) =>
      stat(f).then(
        (s) => `${f}\u0000${s.size}\u0000${s.mtimeMs}\u0000${s.ctimeMs}\u0000${s.ino}`,
        () => `${f}\u0000gone`,
      ),
    ),
  );
  const key = stamps.join('\n');
  const known = discovered.get(root);
  if (known?.key === key) return structuredClone(known.models);
  const models = await readModels(
    root,
    all.filter((f) => !f.endsWith('.yml')),
  );
  discovered.set(root, { key, models: structuredClone(models) });
  return models;
}

/** The last discovery of each folder, with the key of the files it read. */
const discovered = new Map<string, { key: string; models: Model[] }>();

async function readModels(root: string, files: readonly string[]): Promise<Model[]> {
  const models: Model[] = [];
  const seen = new Map<string, string>();
  for (const file of files) {
    const name = basename(file, extname(file));
    const other = seen.get(name);
    if (other)
      throw new EtlError(
        'ETL_CONFIG_INVALID',
        `two models are named ${name}: ${other} and ${file}; model names are relation names and must be unique`,
        { context: { stage: 'models' } },
      );
    seen.set(name, file);
    const layer = relative(root, file).split(sep)[0] ?? '';
    const isSeed = file.endsWith('.csv');
    const sidecar = await readSidecar(file);
    const sql = isSeed ? '' : await readFile(file, 'utf8');
    models.push({ name, layer, file, sql, sidecar, materialized: defaultMaterialization(layer, sidecar, isSeed), dependsOn: [] });
  }
  const names = new Set(models.map((m) => m.name));
  // The relations each model's SQL names, read once: for its dependencies and the checks here, and
  // for what a sliced model reads through its inputs (sliceProblem).
  const reads = new Map<string, Set<string>>();
  for (const m of models) {
    const ids = sqlIdentifiers(renderTemplate(m.sql, { allBranches: true }));
    reads.set(m.name, ids);
    m.dependsOn = [...ids].filter((id) => id !== m.name && names.has(id)).sort();
    for (const src of Object.keys(m.sidecar.sources ?? {})) {
      if (!ids.has(src.toLowerCase())) {
        throw new EtlError('ETL_CONFIG_INVALID', `sidecar of ${m.name} declares source ${src}, but ${m.file} never reads it`, {
          context: { stage: 'models', path: m.file },
        });
      }
    }
    for (const input of m.sidecar.incremental?.full_refresh_on ?? []) {
      if (!ids.has(input.toLowerCase())) {
        throw new EtlError(
          'ETL_CONFIG_INVALID',
          `sidecar of ${m.name} lists ${input} under incremental.full_refresh_on, but ${m.file} never reads it`,
          { context: { stage: 'models', path: m.file } },
        );
      }
    }
    const mark = m.sidecar.incremental?.watermark;
    if (mark && !ids.has(mark.relation.toLowerCase())) {
      throw new EtlError(
        'ETL_CONFIG_INVALID',
        `sidecar of ${m.name} takes its incremental.watermark from ${mark.relation}, but ${m.file} never reads it`,
        { context: { stage: 'models', path: m.file } },
      );
    }
    if (m.materialized === 'incremental' && !m.sidecar.incremental) {
      throw new EtlError('ETL_CONFIG_INVALID', `model ${m.name} is incremental but its sidecar has no incremental.key`, {
        context: { stage: 'models', path: m.file },
      });
    }
  }
  for (const m of models) {
    const why = sliceProblem(m, reads);
    if (why) throw new EtlError('ETL_CONFIG_INVALID', `sidecar of ${m.name} ${why}`, { context: { stage: 'models', path: m.file } });
  }
  return models;
}

/** What is wrong with a model's `slices` (its sidecar), said after "sidecar of <model>"; undefined when nothing is. */
function sliceProblem(m: Model, reads: ReadonlyMap<string, ReadonlySet<string>>): string | undefined {
  const slices = m.sidecar.slices;
  if (!slices) return undefined;
  if (m.materialized !== 'table' && m.materialized !== 'incremental') {
    return `sets slices.count: ${slices.count}, but it is a ${m.materialized}: only a table or an incremental model is built in passes`;
  }
  if (m.sql.search(IN_SLICE) === -1) {
    return `sets slices.count: ${slices.count}, but its SQL has no {{ in_slice(<columns>) }} to keep each pass to its rows: add one where the rows are read (e.g. \`where {{ in_slice(keyword) }}\`)`;
  }
  const of = slices.rows_of;
  if (of && !upstreamOf(reads, m.name).has(of.toLowerCase())) {
    return `measures its slices by slices.rows_of: ${of}, which it never reads, directly or through its inputs: name one it reads`;
  }
  return undefined;
}

/** What model `name` reads, directly or through the models it reads (`reads`: the relations each model's SQL names). */
function upstreamOf(reads: ReadonlyMap<string, ReadonlySet<string>>, name: string): Set<string> {
  const seen = new Set<string>();
  const walk = (model: string) => {
    for (const id of reads.get(model) ?? []) {
      if (id === model || seen.has(id)) continue;
      seen.add(id);
      walk(id);
    }
  };
  walk(name);
  return seen;
}

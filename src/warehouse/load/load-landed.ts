import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { sqlList } from '../columns.js';
import { clearScratch, inflate, longestLine, removeInflated, scratchFile } from '../normalize/inflate.js';
import { MAX_OBJECT_BYTES, OBJECT_TOO_LARGE, objectSizeFor, objectSizeOption } from '../normalize/object-size.js';
import type { Warehouse } from '../warehouse.js';
import { LOAD_BATCH_BYTES, READ_DIRECT_BELOW, startEarly, type Batches, type Early } from './batches.js';
import { commit, ShortRead } from './commit.js';
import { planLoad } from './plan.js';
import { forget, type LoadReport } from './report.js';
import { lookAtSelection, pickNewest, readPicks, selectCalls, type Landed, type LoadSelection } from './select.js';

export type { LoadReport } from './report.js';
export type { LoadSelection } from './select.js';

/**
 * Loads landed responses into their typed tables, reading the raw gzip NDJSON with
 * DuckDB's `read_json` and explicit column types (see sql-build.ts). All of the
 * selection's rows, any new columns, and `alsoInTransaction` (the tasks' collected
 * marks) commit together. Rows are keyed by task id (by call id for `/v1`), and a task's
 * old rows are replaced, so loading the same body twice changes nothing; when a task was
 * fetched more than once, its newest response wins. A kind's files are read
 * `o.batchBytes` of gzip at a time (default 128 MiB; one larger file alone), so scratch
 * space and memory are bounded by a batch, not by the selection; a batch of less than
 * `o.readDirectBelow` bytes (default 8 MiB), or of small files only, is read from the landed
 * files without a scratch file, in pieces of `o.pieceBytes` of bodies (default 1 MiB in memory, 2 MiB on the disk; large files
 * cut, small ones joined; inflate.ts). `o.readDirectBelow: 0` inflates every batch.
 */
export async function loadLanded(
  wh: Warehouse,
  sel: LoadSelection,
  alsoInTransaction: (report: LoadReport) => Promise<void> = async () => {},
  o: { batchBytes?: number; readDirectBelow?: number; pieceBytes?: number } = {},
): Promise<LoadReport> {
  const report: LoadReport = { rows: new Map(), perTask: new Map(), skippedFiles: [], unparsed: [], added: [], picked: new Map(), rereadPlain: [] };
  await wh.flushIndex();
  await clearScratch(wh.dir);
  await selectCalls(wh, sel);
  const { kinds, selected } = await lookAtSelection(wh);
  report.unparsed = kinds.flatMap((k) => k.unparsed);
  const byKind: Landed[] = kinds.filter((k) => k.calls > 0).map(({ kind, files, calls, inFiles }) => ({ kind, files, calls, inFiles }));
  const batches = { bytes: o.batchBytes ?? LOAD_BATCH_BYTES, readDirectBelow: o.readDirectBelow ?? READ_DIRECT_BELOW, pieceBytes: o.pieceBytes };
  // The first batch is cut into pieces (here, on the main thread) while DuckDB looks at the plan of the load below.
  const early: Early = { cut: undefined, removing: [], sized: undefined, ...(byKind[0] && startEarly(wh, byKind[0].kind, byKind[0].files, batches)) };
  try {
    return await planAndLoad(wh, sel, selected, byKind, report, alsoInTransaction, batches, early);
  } finally {
    // A cut the load did not use (it failed first, or a retry read plain text) leaves no scratch file.
    const left = await early.cut;
    early.cut = undefined;
    if (left) await Promise.all(left.pieces.scratch.map((f) => removeInflated(f)));
    // A scratch file that could not be removed is left to the next load's clearScratch.
    await Promise.all(early.removing);
  }
}

async function planAndLoad(
  wh: Warehouse,
  sel: LoadSelection,
  selected: string,
  byKind: readonly Landed[],
  report: LoadReport,
  alsoInTransaction: (report: LoadReport) => Promise<void>,
  batches: Batches,
  early: Early,
): Promise<LoadReport> {
  // Every look, and the pick after them, is sent to DuckDB at once: it runs them in turn while
  // cutEarly cuts the first batch here, on the main thread, and each kind is planned here as its
  // look comes back, while DuckDB goes on with the next one or the pick.
  const planning = byKind.map((landed) => planLoad(wh, landed));
  const picking = pickNewest(wh);
  // All settle first, so that no statement is left running behind a failure.
  const settled = await Promise.allSettled([...planning, picking]);
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  const work = await Promise.all(planning);
  if ('taskIds' in sel) await readPicks(wh, report.picked);
  const how = { countPerTask: 'taskIds' in sel, selected };
  const load = async (w: typeof work) => {
    try {
      await commit(wh, w, how, report, alsoInTransaction, batches, early);
    } catch (err) {
      if (!(err instanceof ShortRead)) throw err;
      // Rolled back whole: load it all again from plain text, which DuckDB has never read short.
      forget(report);
      for (const f of err.files) if (!report.rereadPlain.includes(f)) report.rereadPlain.push(f);
      await commit(wh, w, how, report, alsoInTransaction, { ...batches, readDirectBelow: 0 }, early);
    }
  };
  try {
    await load(work);
  } catch (err) {
    // A raw file the load cannot read (torn gzip, bytes that are not NDJSON) fails the whole
    // batch: find such files, report them, and load the others.
    const { bad, large } = await unreadable(wh, [...new Set(work.flatMap((w) => w.files))]);
    if (bad.length === 0 && large.size === 0) throw err;
    report.skippedFiles.push(...bad);
    forget(report);
    report.rereadPlain = report.rereadPlain.filter((f) => !bad.some((b) => b.file === f));
    // Picked again without those files: a task keeps an older answer's rows if it has one, and
    // one whose only answer is there is not picked (a run leaves it posted, to fetch it again).
    await pickNewest(wh, `file NOT IN (SELECT unnest(${sqlList(bad.map((b) => b.file))}::VARCHAR[]))`);
    if ('taskIds' in sel) await readPicks(wh, report.picked);
    const good = work.map((w) => ({ ...w, files: w.files.filter((f) => !bad.some((b) => b.file === f)) })).filter((w) => w.files.length > 0);
    batches = { ...batches, large };
    await load(good);
  }
  return report;
}

/**
 * Files the load cannot read whole (a torn gzip, bytes that are not NDJSON), each tried alone as
 * the load reads it; and files it reads only with a larger `maximum_object_size` (`large`: an
 * answer over about 32 MB), with the setting each needs.
 */
async function unreadable(wh: Warehouse, files: string[]): Promise<{ bad: { file: string; error: string }[]; large: Map<string, number> }> {
  const bad: { file: string; error: string }[] = [];
  const large = new Map<string, number>();
  const plain = scratchFile(wh.dir);
  for (const f of files) {
    // Empty: Node inflates it to nothing, but DuckDB's gzip reader refuses it (not a gzip stream).
    if ((await stat(join(wh.dir, f)).catch(() => undefined))?.size === 0) {
      bad.push({ file: f, error: 'the file is empty (0 bytes)' });
      continue;
    }
    const read = (bytes?: number) => wh.all(`SELECT count(*) FROM read_json(${sqlList([plain])}, columns = {call_id: 'VARCHAR', body: 'JSON'}, format = 'newline_delimited'${objectSizeOption(bytes)})`);
    try {
      await inflate([join(wh.dir, f)], plain);
      try {
        await read();
      } catch (err) {
        if (!OBJECT_TOO_LARGE.test((err as Error).message)) throw err;
        const longest = await longestLine(plain);
        const bytes = objectSizeFor(longest);
        if (bytes === undefined) throw new Error(`an answer of ${longest} bytes, past the ${MAX_OBJECT_BYTES} bytes the load reads`);
        await read(bytes);
        large.set(f, bytes);
      }
    } catch (err) {
      bad.push({ file: f, error: (err as Error).message.split('\n')[0]! });
    } finally {
      await removeInflated(plain);
    }
  }
  return { bad, large };
}

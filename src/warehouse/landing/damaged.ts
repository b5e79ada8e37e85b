import { createReadStream } from 'node:fs';
import { access, readFile, rename, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createGunzip, gunzip, gunzipSync, gzipSync } from 'node:zlib';
import { memberHeaderAt } from '../normalize/inflate.js';
import { writeDurably } from './write-durably.js';

const gunzipAsync = promisify(gunzip);

/** Landed files up to this size are checked in memory, larger ones (segments) streamed. */
const IN_MEMORY = 8 << 20;

/**
 * Why a landed file cannot be read whole, or null when it can: it inflates to its end (every
 * gzip member whole, each one's CRC right), its last line ends in a newline, and it holds at
 * least `lines` lines (the raw index rows that name it: a file cut at a member's end inflates
 * without an error, one answer short). `data`: its bytes, when the caller has read them.
 */
export async function rawFileDamage(file: string, lines = 0, data?: Buffer): Promise<string | null> {
  let size: number;
  try {
    size = data?.length ?? (await stat(file)).size;
  } catch (err) {
    return `it cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
  if (size === 0) return 'the file is empty (0 bytes)';
  let n = 0;
  let last = 0x0a;
  const count = (b: Buffer) => {
    if (b.length === 0) return;
    for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, i + 1)) n++;
    last = b[b.length - 1]!;
  };
  try {
    if (data || size <= IN_MEMORY) count(await gunzipAsync(data ?? (await readFile(file))));
    else
      await pipeline(createReadStream(file), createGunzip(), async (src: AsyncIterable<Buffer>) => {
        for await (const b of src) count(b);
      });
  } catch (err) {
    return `it does not inflate to its end (${(err as Error).message})`;
  }
  if (last !== 0x0a) return 'its last line is cut off';
  if (n < lines) return `it holds ${n} answer(s) where the raw index has ${lines}`;
  return null;
}

/**
 * The lines of a damaged landed file that can still be read: those of every gzip member that
 * inflates whole (its CRC checked; the landing gzips each answer alone and compaction joins
 * members as they are), each a JSON object. A member cut off or damaged is skipped, and the
 * members after it are still read.
 */
export function readableLines(buf: Buffer): string[] {
  const starts: number[] = [];
  for (let i = buf.indexOf(0x1f); i >= 0 && i + 10 <= buf.length; i = buf.indexOf(0x1f, i + 1)) if (memberHeaderAt(buf, i)) starts.push(i);
  const out: string[] = [];
  let i = 0;
  while (i < starts.length) {
    let next = i + 1;
    // A member is read up to the next header; a header-like run of bytes inside a member cuts it
    // short, so the next few headers are tried as its end too.
    for (let j = i + 1; j <= Math.min(starts.length, i + 4); j++) {
      let text: string;
      try {
        text = gunzipSync(buf.subarray(starts[i], starts[j] ?? buf.length)).toString('utf8');
      } catch {
        continue;
      }
      for (const line of text.split('\n')) if (isJsonObject(line)) out.push(line);
      next = j;
      break;
    }
    i = next;
  }
  return out;
}

function isJsonObject(line: string): boolean {
  if (!line.startsWith('{')) return false;
  try {
    const v: unknown = JSON.parse(line);
    return v !== null && typeof v === 'object' && !Array.isArray(v);
  } catch {
    return false;
  }
}

/**
 * Keeps a damaged landed file apart, never deleting it: what can be read of it
 * ({@link readableLines}) is written to `<name>.salvaged.ndjson.gz` (each line its own gzip
 * member, as landed), then the file itself is renamed `<name>.ndjson.gz.damaged`, which no
 * reindex, load or compaction reads. Returns both names (`salvaged` null when nothing could
 * be read) and how many lines were kept.
 */
export async function keepApart(file: string, o: { salvage: boolean }): Promise<{ keptAs: string | null; salvaged: string | null; lines: number }> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    // A file the index names that is gone: nothing to keep apart or read back.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { keptAs: null, salvaged: null, lines: 0 };
    throw err;
  }
  const lines = o.salvage ? readableLines(bytes) : [];
  let salvaged: string | null = null;
  if (lines.length > 0) {
    salvaged = await freeName(`${file.replace(/\.ndjson\.gz$/, '')}.salvaged`, '.ndjson.gz');
    await writeDurably(salvaged, Buffer.concat(lines.map((l) => gzipSync(`${l}\n`))));
  }
  const keptAs = await freeName(file, '.damaged');
  await rename(file, keptAs);
  return { keptAs, salvaged, lines: lines.length };
}

/** `${base}${suffix}`, or `${base}.2${suffix}`, ... : a name no file has. */
async function freeName(base: string, suffix: string): Promise<string> {
  for (let n = 1; ; n++) {
    const name = n === 1 ? `${base}${suffix}` : `${base}.${n}${suffix}`;
    try {
      await access(name);
    } catch {
      return name;
    }
  }
}

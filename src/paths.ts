import { lstat, mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { EtlError } from './errors.js';

/** Why a file-system call failed, in words, by Node's error code. */
const REASONS: Record<string, string> = {
  ENOENT: 'no such file or folder',
  ENOTDIR: 'not a folder',
  EISDIR: 'it is a folder, not a file',
  EEXIST: 'a file of that name is in the way',
  EACCES: 'permission denied',
  EPERM: 'not permitted',
  EROFS: 'read-only file system',
  ENAMETOOLONG: 'name too long',
  ELOOP: 'too many symbolic links',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
};

/** A Node file-system error (`ENOENT`, `EACCES`, ...): it has a `code` and the `path` it was about. */
export function isPathError(err: unknown): err is NodeJS.ErrnoException & { code: string; path: string } {
  const e = err as NodeJS.ErrnoException | undefined;
  return e instanceof Error && typeof e.code === 'string' && e.code in REASONS && typeof e.path === 'string';
}

/**
 * A path the user gave that cannot be used, as the CLI's usage error (exit 2, nothing sent):
 * one line naming it, why, and what to do. `what`: how the user named it (`--out nodir/x.csv`);
 * `todo`: what to do about it. Anything that is not a file-system error is returned as it is.
 */
export function pathError(err: unknown, what: string, todo: string): unknown {
  if (!isPathError(err)) return err;
  const reason = err.code === 'ENOENT' && err.syscall === 'mkdir' ? 'a folder cannot be made there' : REASONS[err.code]!;
  // The path that failed, when it is not the one named (a missing folder above it, say).
  const at = resolve(err.path) === resolve(what.split(' ').at(-1)!) ? '' : ` (${err.path})`;
  return new EtlError('ETL_CONFIG_INVALID', `${what}: ${reason}${at}. ${todo}`, { cause: err, context: { path: err.path } });
}

/**
 * Checks, before any work, that `file` can be written where it is named: its folder is there and
 * is a folder, and the file is not a folder. `what`: how the user named it (`--out x.csv`).
 * Throws the usage error of pathError otherwise. The write itself may still fail (permissions).
 */
export async function checkOutFile(file: string, what: string, o: { makesFolders?: boolean } = {}): Promise<void> {
  const todo = o.makesFolders
    ? 'Pass a file under a folder you can write (missing folders are made).'
    : 'Pass a file in a folder that is there (the folder is not made).';
  const abs = resolve(file);
  try {
    // With makesFolders, the nearest folder that is there must be one (makeDirs makes the rest).
    let at = dirname(abs);
    while (o.makesFolders && dirname(at) !== at && !(await exists(at))) at = dirname(at);
    const dir = await stat(at);
    if (!dir.isDirectory()) throw fsError('ENOTDIR', 'open', at);
    const s = await stat(abs).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (s?.isDirectory()) throw fsError('EISDIR', 'open', abs);
  } catch (err) {
    throw pathError(err, what, todo);
  }
}

/** Checks that `dir` is a folder that is there; else the usage error of pathError, with `todo`. */
export async function checkFolder(dir: string, what: string, todo: string): Promise<void> {
  try {
    if (!(await stat(dir)).isDirectory()) throw fsError('ENOTDIR', 'scandir', resolve(dir));
  } catch (err) {
    throw pathError(err, what, todo);
  }
}

/** Whether something is at `path` (lstat: a dangling link is something). */
async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return false;
      throw err;
    },
  );
}

/** An error like Node's, for a check made here (a file where a folder should be). */
function fsError(code: string, syscall: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${REASONS[code]}, ${syscall} '${path}'`), { code, syscall, path });
}

/**
 * `mkdir -p` without Node's `recursive: true`, which loops forever (100% CPU, deaf to Ctrl-C)
 * where a folder cannot be made, such as under `/proc/1/`: walks up to the nearest folder
 * that is there, then makes each missing one in turn, so an impossible path fails at once
 * with the error of the folder that could not be made. A file in the way is ENOTDIR.
 */
export async function makeDirs(dir: string, mode?: number): Promise<void> {
  const missing: string[] = [];
  for (let at = resolve(dir); ; at = dirname(at)) {
    const s = await stat(at).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (s) {
      if (!s.isDirectory()) throw fsError('ENOTDIR', 'mkdir', at);
      break;
    }
    missing.push(at);
    if (dirname(at) === at) break;
  }
  for (const d of missing.reverse()) {
    try {
      await mkdir(d, mode === undefined ? {} : { mode });
    } catch (err) {
      // Made meanwhile by another process: fine when it is a folder.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !(await stat(d)).isDirectory()) throw err;
    }
  }
}

import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIsCurrent } from '../bin/source-stamp.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));

/**
 * Before any test: the compiled build (dist/) of src/ as it is now, so the tests' many CLI children
 * (`node bin/pipeline.mjs ...`) start in a fraction of the time tsx takes. The tests still run the
 * current code either way: bin/pipeline.mjs runs dist/ only while its stamp matches src/, and a file
 * edited during the tests sends the later children to the sources through tsx. A build that fails
 * (a type error: `npm test` reports it through `npm run typecheck`) leaves the children on tsx.
 */
export default function setup(): (() => void) | undefined {
  build();
  return tempOnRamDisk();
}

function build(): void {
  if (process.env.PIPELINE_FROM_SOURCE === '1' || buildIsCurrent(`${root}src`, `${root}dist`)) return;
  const r = spawnSync(process.execPath, ['scripts/build.mjs', '--quiet'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.stderr.write('global setup: the build failed; CLI children run src/ through tsx\n');
}

/**
 * The tests' temporary folders (warehouses, landed answers, published files: `tempDir()` and every
 * `os.tmpdir()`) go to a folder of their own on the RAM disk, where the machine has one and TMPDIR
 * is not set: the product fsyncs what it writes, which waits on a disk and costs nothing in memory,
 * and a test's kills are of processes, which the page cache outlives either way. The workers and
 * their CLI children inherit TMPDIR; the folder goes when the run ends. A small RAM disk (a
 * container's 64 MB default) is left alone: the suite's folders need more than it holds.
 */
const RAM_DISK_NEEDED_BYTES = 4 * 1024 ** 3;

function tempOnRamDisk(): (() => void) | undefined {
  const shm = '/dev/shm';
  if (process.env.TMPDIR || process.platform !== 'linux') return undefined;
  try {
    accessSync(shm, constants.W_OK);
    const fs = statfsSync(shm);
    if (fs.bavail * fs.bsize < RAM_DISK_NEEDED_BYTES) return undefined;
  } catch {
    return undefined;
  }
  const dir = mkdtempSync(join(shm, 'pipeline-tests-'));
  process.env.TMPDIR = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}

// Set-up shared by the tests that kill a run at a known point (run-kill-matrix, run-kill-paid-answer)
// and compare the files a run left (run-kill-matrix, run-lake-behind).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsChildArgs } from './ts-child.js';

/** The kill matrix's child: one `pipeline run` that kills itself where PIPELINE_TEST_KILL_AT says. */
const KILL_CHILD = fileURLToPath(new URL('./run-kill-matrix-child.ts', import.meta.url));

/**
 * Runs the kill matrix's child (`<pipeline file> <warehouse dir> <service url> [lake url]`) until it
 * kills itself at the point `env.PIPELINE_TEST_KILL_AT` names; what it said. Rejects when it ends
 * any other way.
 */
export function killedAt(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, tsChildArgs(KILL_CHILD, args), { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += String(c)));
    child.stderr.on('data', (c: Buffer) => (out += String(c)));
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      signal === 'SIGKILL' ? resolve(out) : reject(new Error(`child ended with ${code}, not killed: ${out}`)),
    );
  });
}

/** Every file under `dir` (relative path → sha256). */
export async function filesUnder(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const path = join(e.parentPath, e.name);
    out[relative(dir, path)] = createHash('sha256')
      .update(await readFile(path))
      .digest('hex');
  }
  return out;
}

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../../bin/pipeline.mjs', import.meta.url));

describe('a reader that stops early', () => {
  it('leaves the command quiet and successful (pipeline endpoints | head)', async () => {
    const child = spawn(process.execPath, [bin, 'endpoints'], { stdio: ['ignore', 'pipe', 'pipe'] });
    // The reading end is gone before the command prints anything: every write meets a closed pipe.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((r) => child.on('close', r));
    expect(stderr).not.toMatch(/EPIPE|Error|at /);
    expect(stderr).toMatch(/^\d+ endpoints\n$/);
    expect(code).toBe(0);
  }, 30_000);
});

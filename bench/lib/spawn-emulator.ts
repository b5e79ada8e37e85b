import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { AdminStatsBody, SandboxOptions } from '../../src/sandbox/index.js';

const sandboxModule = fileURLToPath(new URL('../../src/sandbox/index.ts', import.meta.url));

/** What the emulator's process reports when stopped. */
export interface EmulatorEnd {
  cpuS: number;
  stats: AdminStatsBody;
}

/**
 * Starts the emulator in its own process (as the service is: its result building and gzip
 * are not charged to the run's process), with `startSandbox` options that survive JSON.
 */
export async function spawnEmulator(
  opts: Omit<SandboxOptions, 'now' | 'callbackDispatcher' | 'faultPaths'>,
): Promise<{ url: string; pid: number; stop: () => Promise<EmulatorEnd> }> {
  const code = `
const { startSandbox } = await import(${JSON.stringify(sandboxModule)});
const sb = await startSandbox(${JSON.stringify({ ...opts, admin: true })});
process.send({ url: sb.url });
process.on('message', async () => {
  const stats = await (await fetch(sb.url + '/__admin/stats')).json();
  const c = process.cpuUsage();
  // A large message (a tag a task) must be sent whole before the channel closes.
  await new Promise((r) => process.send({ cpuS: (c.user + c.system) / 1e6, stats }, r));
  await sb.close();
  process.disconnect();
});
`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const { url } = await new Promise<{ url: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { url: string }));
    child.once('exit', (c) => reject(new Error(`the emulator's process ended (exit ${c}) before it listened`)));
  });
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exit ${code ?? signal}`));
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise<EmulatorEnd>((resolve, reject) => {
        if (exited) return reject(new Error(`the emulator's process ended before it was stopped (${exited})`));
        let end: EmulatorEnd | undefined;
        child.once('message', (m) => (end = m as EmulatorEnd));
        child.once('exit', (code, signal) =>
          end ? resolve(end) : reject(new Error(`the emulator's process ended without its figures (exit ${code ?? signal})`)),
        );
        child.send('stop');
      }),
  };
}

/** Samples this process's CPU seconds every 100 ms, so a span of the run can be charged its own CPU. */
export function cpuSampler(): { stop: () => void; at: (epochMs: number) => number } {
  const samples: Array<{ t: number; cpuS: number }> = [];
  const take = () => {
    const c = process.cpuUsage();
    samples.push({ t: Date.now(), cpuS: (c.user + c.system) / 1e6 });
  };
  take();
  const timer = setInterval(take, 100);
  return {
    stop: () => {
      clearInterval(timer);
      take();
    },
    at: (epochMs) => {
      let best = samples[0]!;
      for (const s of samples) if (Math.abs(s.t - epochMs) < Math.abs(best.t - epochMs)) best = s;
      return best.cpuS;
    },
  };
}

/** `--name value` from the command line, or the default. */
export function flag(name: string, dflt: string): string {
  const argv = process.argv.slice(2);
  return argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1]! : dflt;
}

/** The load average now, for the figures' context. */
export async function loadAverage(): Promise<string> {
  const { loadavg } = await import('node:os');
  return loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
}

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';

const KEY = 'svc_sandbox_benchkey1';

/** Starts `pipeline sandbox` in its own process (rate limits off) and resolves its URL and a stop function. */
async function serveInChild(): Promise<{ url: string; stop: () => void }> {
  const bin = fileURLToPath(new URL('../../bin/pipeline.mjs', import.meta.url));
  const child = spawn(
    process.execPath,
    [bin, 'sandbox', '--port', '0', '--no-rate-limits', '--ready-after', '0', '--sandbox-key', KEY, '--live-key', 'svc_live_testbenchkey1'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`sandbox exited with ${code}: ${err}`)));
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

/**
 * Measures how many `task_get/advanced` calls per second the emulator serves over a
 * loopback socket, rate limits off, with the emulator in its own process (as
 * `pipeline sandbox` runs) so the figure is the server's, not the client's. Posts
 * `tasks` tasks, fetches them once to warm up, then `rounds` times with `concurrency`
 * requests in flight. For `npm run bench`: print `sandbox.task_get_per_s <value>`.
 */
export async function benchTaskGet(opts: { tasks?: number; rounds?: number; concurrency?: number } = {}): Promise<number> {
  const tasks = opts.tasks ?? 100;
  const rounds = opts.rounds ?? 100;
  const concurrency = opts.concurrency ?? 16;
  const server = await serveInChild();
  const agent = new Agent({ connections: concurrency });
  const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
  const fetchAll = async (ids: string[]) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < ids.length) {
          const res = await request(`${server.url}/v3/serp/engA/organic/task_get/advanced/${ids[next++]!}`, { headers, dispatcher: agent });
          await res.body.arrayBuffer();
        }
      }),
    );
  };
  try {
    const ids: string[] = [];
    for (let i = 0; i < tasks; i += 100) {
      const body = JSON.stringify(
        Array.from({ length: Math.min(100, tasks - i) }, (_, j) => ({ keyword: `bench keyword ${i + j}`, location_code: 2840, depth: 10 })),
      );
      const res = await request(`${server.url}/v3/serp/engA/organic/task_post`, { method: 'POST', headers, body, dispatcher: agent });
      const env = (await res.body.json()) as { tasks: Array<{ id: string }> };
      ids.push(...env.tasks.map((t) => t.id));
    }
    for (let w = 0; w < 5; w++) await fetchAll(ids); // build the results and warm the JIT
    const all = Array.from({ length: rounds }, () => ids).flat();
    const t0 = performance.now();
    await fetchAll(all);
    return all.length / ((performance.now() - t0) / 1000);
  } finally {
    await agent.close();
    server.stop();
  }
}

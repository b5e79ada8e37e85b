// `npx tsx bench/client-rate.ts [--limit 60] [--windows 6] [--window-ms 5000]`: streams calls
// of one family through the client's limiter against a loopback server that enforces the
// family's limit over a sliding window (the spec's minute, time-scaled to --window-ms), and
// prints the share of the limit used and the 429s received:
//   client.rate_use  achieved calls per window after the first burst / limit  (target >= 0.98)
//   client.429s      refusals the server sent                                 (target 0)
// Figures, not assertions. Point it at the emulator's time-scaled window once it has one.
// The limiter holds each slot until a window after the call's answer (the only rule that
// guarantees the server never counts more than the limit, wherever in the round trip it
// stamps a call), so each slot loses one round trip per window: a time scale that shrinks
// the window but not the network shows that loss larger than it is. Default: a 5 s window
// (a 12x scale); at a 1 s window the same run gives about 0.95, at the real minute ~0.999.
import { spawn } from 'node:child_process';
import { endpoint } from '../src/catalog/index.js';
import { ServiceClient } from '../src/client/index.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const LIMIT = arg('limit', 60);
const WINDOWS = arg('windows', 6);
const WINDOW_MS = arg('window-ms', 5000);


// The server runs in its own process, as the emulator or the service would: a server sharing
// the client's event loop would add the client's own work to every round trip.
const SERVER = `
const { createServer } = require('node:http');
const { performance } = require('node:perf_hooks');
const [LIMIT, WINDOW_MS] = process.argv.slice(1).map(Number);
const accepted = [];
let refused = 0;
const server = createServer((req, res) => {
  const t = performance.now();
  req.resume();
  let inWindow = 0;
  for (let i = accepted.length - 1; i >= 0 && accepted[i] > t - WINDOW_MS; i--) inWindow++;
  if (inWindow >= LIMIT) {
    refused++;
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(WINDOW_MS / 10000) });
    res.end('{"status_code":40202,"status_message":"Rate limit per minute exceeded."}');
    return;
  }
  accepted.push(t);
  res.writeHead(200, { 'content-type': 'application/json', 'x-svc-charge-cny': '0', 'x-svc-request-id': String(accepted.length) });
  res.end('{"status_code":20000,"status_message":"Ok.","tasks_count":1,"tasks_error":0,"tasks":[{"id":"x","status_code":20000,"result":[]}]}');
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', () => { process.send({ accepted, refused }); server.close(); process.disconnect(); });
`;
const child = spawn(process.execPath, ['-e', SERVER, String(LIMIT), String(WINDOW_MS)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const { port } = await new Promise<{ port: number }>((r) => child.once('message', (m) => r(m as { port: number })));
const url = `http://127.0.0.1:${port}`;

const ep = endpoint('serp.engA.organic.tasks_ready');
const client = new ServiceClient({
  baseUrl: url,
  apiKey: 'svc_sandbox_bench',
  land: async () => {},
  limits: { windowMs: WINDOW_MS, perMinute: { [ep.family]: LIMIT }, concurrency: LIMIT },
});
const calls = LIMIT * WINDOWS;
await Promise.all(Array.from({ length: calls }, () => client.call(ep)));
child.send('report');
const { accepted, refused } = await new Promise<{ accepted: number[]; refused: number }>((r) => child.once('message', (m) => r(m as { accepted: number[]; refused: number })));

// The first window's burst starts the clock; every later call is paced by the limiter.
const span = accepted.at(-1)! - accepted[0]!;
const rateUse = (accepted.length - LIMIT) / (span / WINDOW_MS) / LIMIT;
let maxInWindow = 0;
for (let i = 0, j = 0; j < accepted.length; j++) {
  while (accepted[j]! - accepted[i]! >= WINDOW_MS) i++;
  maxInWindow = Math.max(maxInWindow, j - i + 1);
}
console.log(`client limiter, family ${ep.family}: ${calls} calls, limit ${LIMIT} per ${WINDOW_MS} ms window, most in any sliding window ${maxInWindow} (Node ${process.version})`);
console.log(`client.rate_use ${rateUse.toFixed(3)}`);
console.log(`client.429s ${refused}`);

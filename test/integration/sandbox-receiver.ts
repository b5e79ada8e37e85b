import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterEach } from 'vitest';

/** One request a callback receiver saw. */
export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** The body gunzipped and parsed, when it was a gzip JSON postback. */
  json?: any;
}

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c()));
});

/** A loopback callback server; `answer` decides the status and an optional delay per request. */
export async function receiver(answer: () => { status: number; delayMs?: number } = () => ({ status: 200 })) {
  const seen: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const r: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      if (req.headers['content-encoding'] === 'gzip') r.json = JSON.parse(gunzipSync(body).toString('utf8'));
      seen.push(r);
      const { status, delayMs = 0 } = answer();
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(`answered ${status}`);
      }, delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  open.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${port}`, seen };
}

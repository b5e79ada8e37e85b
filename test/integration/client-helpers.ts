import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, n: number, body: string) => void;

/** A scripted server on loopback that records every request it sees (with its body). */
export async function scripted(handler: Handler): Promise<{ url: string; seen: Seen[]; server: Server; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, seen.length, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    server,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

export function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'x-svc-request-id': `srv-${Math.random().toString(36).slice(2)}`,
    'x-svc-charge-cny': '0.0000',
    ...headers,
  });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

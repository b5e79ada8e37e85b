import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

/** s3rver's built-in account; any other key id is refused with InvalidAccessKeyId. */
export const S3RVER_KEY = { id: 'S3RVER', secret: 'S3RVER' };

/** A real S3-compatible server (s3rver) on a free loopback port, with one bucket, and a log of the requests it served. */
export interface LocalS3 {
  endpoint: string;
  bucket: string;
  /** `METHOD /bucket/key?query` of every request, in order (the path decoded). */
  requests: string[];
  env: Record<string, string>;
  client: S3Client;
  close: () => Promise<void>;
}

export async function startS3(directory: string, bucket = 'lake'): Promise<LocalS3> {
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const requests: string[] = [];
  server.httpServer?.on('request', (req: IncomingMessage) => requests.push(`${req.method} ${decodePath(req.url ?? '')}`));
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: S3RVER_KEY.id, secretAccessKey: S3RVER_KEY.secret },
  });
  return {
    endpoint,
    bucket,
    requests,
    env: {
      AWS_ENDPOINT_URL: endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: S3RVER_KEY.id,
      AWS_SECRET_ACCESS_KEY: S3RVER_KEY.secret,
    },
    client,
    close: async () => {
      client.destroy();
      await server.close();
    },
  };
}

/** Every key under a prefix of the bucket. */
export async function listKeys(s3: LocalS3, prefix = ''): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix, ContinuationToken: token }));
    for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys.sort();
}

/** The bytes of one object. */
export async function getBytes(s3: LocalS3, key: string): Promise<Buffer> {
  const res = await s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
  return Buffer.from(await res.Body!.transformToByteArray());
}

/** A port on loopback where nothing listens (bound, then released). */
export async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Sends a request on to the S3 server at `to`, and its answer back. */
function forward(to: URL, req: IncomingMessage, res: ServerResponse): void {
  const up = httpRequest({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
    res.writeHead(r.statusCode ?? 502, r.headers);
    r.pipe(res);
  });
  up.on('error', () => res.destroy());
  req.pipe(up);
}

/**
 * A loopback proxy in front of the S3 server that answers an S3 error (500 InternalError
 * unless told) to the requests `fail` picks, after draining their bodies, or never answers
 * them (`'hang'`: a store that accepts and goes silent), and forwards the rest unchanged.
 */
export async function faultyProxy(
  target: string,
  fail: (req: IncomingMessage) => boolean,
  answer: { status: number; code: string } | 'hang' = { status: 500, code: 'InternalError' },
): Promise<{ endpoint: string; close: () => Promise<void> }> {
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    if (fail(req)) {
      req.resume();
      if (answer === 'hang') return;
      req.on('end', () => {
        res.statusCode = answer.status;
        res.setHeader('content-type', 'application/xml');
        res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${answer.code}</Code><Message>injected by the test</Message></Error>`);
      });
      return;
    }
    forward(to, req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/**
 * A loopback proxy in front of the S3 server that holds each request `hold` picks until
 * `release()` (telling `held` of the first), and forwards everything unchanged.
 */
export async function gatedProxy(
  target: string,
  hold: (req: IncomingMessage) => boolean,
): Promise<{ endpoint: string; held: Promise<void>; release: () => void; close: () => Promise<void> }> {
  const to = new URL(target);
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let first!: () => void;
  const held = new Promise<void>((r) => (first = r));
  const server: Server = createServer(async (req, res) => {
    if (hold(req)) {
      first();
      await released;
    }
    forward(to, req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    release,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/**
 * A published layout made by real DuckDB, as the run makes it: tables copied with
 * `COPY ... PARTITION_BY (date)` to `parquet/<table>/date=<d>/part-<i>.parquet`, and the
 * lake's catalog `serving/lake.duckdb` of views over them (uploaded as `serving.duckdb`).
 */
export async function writeLayout(dir: string, o: { serpRows?: number; seed?: number; tables?: string[] } = {}): Promise<void> {
  await mkdir(join(dir, 'parquet'), { recursive: true });
  const tables = o.tables ?? ['serp_items', 'ledger'];
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  try {
    const seed = o.seed ?? 1;
    const n = o.serpRows ?? 300;
    if (tables.includes('serp_items')) {
      await con.run(`CREATE TABLE serp_items AS SELECT i AS id, 'kw ' || (i % 17) AS keyword, (i % 100) + ${seed} AS rank_absolute,
        DATE '2026-01-01' + (i % 3)::INT AS date FROM range(${n}) t(i)`);
      await con.run(
        `COPY serp_items TO '${join(dir, 'parquet', 'serp_items')}' (FORMAT parquet, PARTITION_BY (date), OVERWRITE, FILENAME_PATTERN 'part-{i}')`,
      );
    }
    if (tables.includes('ledger')) {
      await con.run(
        `CREATE TABLE ledger AS SELECT i AS call_id, (i * 0.0006)::DECIMAL(18,6) AS cost_cny, DATE '2026-01-01' + (i % 2)::INT AS date FROM range(50) t(i)`,
      );
      await con.run(
        `COPY ledger TO '${join(dir, 'parquet', 'ledger')}' (FORMAT parquet, PARTITION_BY (date), OVERWRITE, FILENAME_PATTERN 'part-{i}')`,
      );
    }
  } finally {
    con.closeSync();
    db.closeSync();
  }
  await mkdir(join(dir, 'serving'), { recursive: true });
  const serving = await DuckDBInstance.create(join(dir, 'serving', 'lake.duckdb'));
  const sc = await serving.connect();
  try {
    // Relative paths in the views (so the folder can be mounted anywhere); resolved here against the folder.
    await sc.run(`SET file_search_path = '${dir}'`);
    for (const t of tables) {
      await sc.run(`CREATE OR REPLACE VIEW ${t} AS SELECT * FROM read_parquet('parquet/${t}/*/*.parquet', hive_partitioning = true)`);
    }
    await sc.run('CHECKPOINT');
  } finally {
    sc.closeSync();
    serving.closeSync();
  }
}

/** A Parquet file above `bytes` (random text, uncompressed), written by DuckDB at `path`. */
export async function writeBigParquet(path: string, bytes: number): Promise<void> {
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  try {
    const rows = Math.ceil(bytes / 64) + 1000;
    await con.run(
      `COPY (SELECT md5(i::VARCHAR) || md5((i * 7919)::VARCHAR) AS s FROM range(${rows}) t(i)) TO '${path}' (FORMAT parquet, COMPRESSION uncompressed)`,
    );
  } finally {
    con.closeSync();
    db.closeSync();
  }
}

function decodePath(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? decodeURIComponent(url) : decodeURIComponent(url.slice(0, q)) + url.slice(q);
}

import { z } from 'zod';
import { EtlError } from '../errors.js';

const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

/** `host:port` of the callback server; `[::1]:8787` for IPv6, port 0 for any free port. */
export const listenSchema = z.string().refine(
  (s) => {
    const m = HOST_PORT.exec(s);
    return m !== null && Number(m[2]) <= 65535;
  },
  { error: "host:port, e.g. '127.0.0.1:8787', '0.0.0.0:8787' or '[::1]:8787' (port 0 picks a free one)" },
);

/**
 * How a run gets its results back, at the top level of a pipeline file. Push needs an
 * address the service can reach; without one, `auto` (the default) pulls, so a pipeline
 * without this block behaves as before.
 */
export const collectionSchema = z
  .strictObject({
    mode: z
      .enum(['auto', 'pull', 'push'], { error: 'one of auto, pull, push' })
      .default('auto')
      .describe(
        '`pull`: poll tasks_ready and fetch each task (one rate-limited call per task). `push`: the service delivers each result to a callback server this run starts (gzip postback); what does not arrive is recovered through `{api}/errors` and webhook_resend, and the rest is pulled. `auto` (default): push when `public_url` is set, else pull.',
      ),
    callback: z
      .enum(['postback', 'pingback'], { error: 'postback or pingback' })
      .default('postback')
      .describe(
        'With push: `postback` (default) delivers the result itself, gzip-compressed; `pingback` only says a task is done, and the run fetches it with task_get (a rate-limited call per task, as pull).',
      ),
    listen: listenSchema
      .default('127.0.0.1:8787')
      .describe(
        'Address the callback server listens on, `host:port`. Default `127.0.0.1:8787`; `0.0.0.0:8787` to accept from other machines, port 0 for any free port.',
      ),
    public_url: z
      .url({ protocol: /^https?$/, error: 'an absolute http(s) URL, e.g. https://etl.example.com/callbacks' })
      .refine((u) => !u.includes('?') && !u.includes('#'), { error: 'no query or fragment: the run appends its own path and query' })
      .optional()
      .describe(
        'Where the service reaches the callback server (a reverse proxy may add a path prefix: the server matches the end of the path). The run appends `/<secret>/postback?id=$id&tag=$tag` with a secret made fresh for each run process. Without it, push uses `http://<listen>`, which only a service on this machine (the built-in sandbox) can reach.',
      ),
    deadline_minutes: z
      .number()
      .positive('a positive number of minutes')
      .default(30)
      .describe(
        'The run stops collecting after this long (every mode); what is not collected by then stays in state and the next run collects it. `pipeline run --collect-timeout` overrides it.',
      ),
    callback_wait_minutes: z
      .number()
      .positive('a positive number of minutes')
      .default(10)
      .describe(
        'With push: after this long without a callback arriving while tasks are still out, stop waiting and pull what is left (tasks_ready and task_get). Callbacks the service reports as failed are recovered at once and do not wait for this.',
      ),
    max_body_mb: z
      .number()
      .positive('a positive number of megabytes')
      .max(1024, 'at most 1024')
      .default(16)
      .describe('Largest callback body accepted as sent (gzip), in MB; a larger one is refused with 413 and the task is pulled instead.'),
    max_unzipped_mb: z
      .number()
      .positive('a positive number of megabytes')
      .max(4096, 'at most 4096')
      .default(16)
      .describe(
        'Largest callback body accepted after gunzip, in MB (a guard against gzip bombs, and against many large bodies at once: 32 are read at a time); a larger one is refused with 413 and the task is pulled instead.',
      ),
  })
  .describe('How results come back: pull, push (a callback server) or auto, and the limits of the callback server.');

/** The `collection` block as written. */
export type CollectionInput = z.input<typeof collectionSchema>;
/** The `collection` block with every default filled. */
export type Collection = z.output<typeof collectionSchema>;

/** The `collection` block of a pipeline file that leaves it out. */
export const DEFAULT_COLLECTION: Collection = collectionSchema.parse({});

/** A collection mode resolved for one run: `auto` decided, the address the service calls known. */
export type ResolvedCollection =
  | { mode: 'pull'; deadlineMs: number }
  | {
      mode: 'push';
      deadlineMs: number;
      callback: 'postback' | 'pingback';
      host: string;
      port: number;
      /** Where the service reaches the server; undefined: `http://<host>:<bound port>`, known once the server listens. */
      publicUrl: string | undefined;
      /** Stop waiting for callbacks after this long without one, and pull the rest. */
      callbackWaitMs: number;
      maxBodyBytes: number;
      maxUnzippedBytes: number;
    };

/** Command-line overrides of the block (`pipeline run --collect/--listen/--public-url`). */
export interface CollectionOverrides {
  mode?: Collection['mode'];
  listen?: string;
  publicUrl?: string;
  deadlineMs?: number;
}

/**
 * Decides the mode of one run: `auto` pushes when a public URL is known (from the file or
 * the command line), else pulls. Overrides are checked with the same rules as the file.
 */
export function resolveCollection(block: Collection | undefined, overrides: CollectionOverrides = {}): ResolvedCollection {
  const parsed = collectionSchema.safeParse({
    ...(block ?? DEFAULT_COLLECTION),
    ...(overrides.mode ? { mode: overrides.mode } : {}),
    ...(overrides.listen ? { listen: overrides.listen } : {}),
    ...(overrides.publicUrl ? { public_url: overrides.publicUrl } : {}),
  });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `collection.${i.path.join('.')}: ${i.message}`);
    throw new EtlError(
      'ETL_CONFIG_INVALID',
      `collection settings are invalid; nothing was sent to the service:\n  ${problems.join('\n  ')}`,
    );
  }
  const c = parsed.data;
  const deadlineMs = overrides.deadlineMs ?? c.deadline_minutes * 60_000;
  const mode = c.mode === 'auto' ? (c.public_url ? 'push' : 'pull') : c.mode;
  if (mode === 'pull') return { mode, deadlineMs };
  const m = HOST_PORT.exec(c.listen)!;
  return {
    mode,
    deadlineMs,
    callback: c.callback,
    host: m[1]!.replace(/^\[|\]$/g, ''),
    port: Number(m[2]),
    publicUrl: c.public_url?.replace(/\/+$/, ''),
    callbackWaitMs: c.callback_wait_minutes * 60_000,
    maxBodyBytes: Math.round(c.max_body_mb * 1024 * 1024),
    maxUnzippedBytes: Math.round(c.max_unzipped_mb * 1024 * 1024),
  };
}

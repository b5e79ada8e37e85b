import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

/** Fields that could hold a key, wherever they sit in a log line. */
export const REDACT_PATHS = [
  'apiKey',
  '*.apiKey',
  'key',
  '*.key',
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
];

/**
 * pino on stderr (stdout is for results), with API keys redacted wherever they sit: JSON
 * lines for machines, pretty lines when stderr is a terminal (or `LOG_FORMAT=pretty`).
 * Level: `--log-level`, else `LOG_LEVEL`, else `warn`, so a terminal shows progress, not logs.
 */
export function makeLogger(level?: string, opts: { pretty?: boolean } = {}): Logger {
  const usePretty = opts.pretty ?? (process.env.LOG_FORMAT ? process.env.LOG_FORMAT === 'pretty' : process.stderr.isTTY === true);
  const options = {
    level: level ?? process.env.LOG_LEVEL ?? 'warn',
    redact: { paths: REDACT_PATHS, censor: '***' },
  };
  if (usePretty)
    return pino(options, pretty({ destination: 2, sync: true, colorize: process.stderr.isTTY === true, ignore: 'pid,hostname' }));
  return pino(options, pino.destination(2));
}

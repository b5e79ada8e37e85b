import pino, { type Logger } from 'pino';

/**
 * pino JSON on stderr (stdout is for results), with API keys redacted wherever they sit.
 * Level: `--log-level`, else `LOG_LEVEL`, else `warn` so a terminal shows progress, not logs.
 */
export function makeLogger(level?: string): Logger {
  return pino(
    {
      level: level ?? process.env.LOG_LEVEL ?? 'warn',
      redact: { paths: ['apiKey', '*.apiKey', 'headers.authorization', '*.headers.authorization'], censor: '***' },
    },
    pino.destination(2),
  );
}

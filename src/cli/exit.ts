import { EtlError, ExitCode, exitCodeFor } from '../errors.js';
import { redact } from '../client/index.js';

/**
 * The one way errors leave the CLI: a message without a stack trace for known errors,
 * with API keys and AWS secrets redacted, and the documented exit code.
 */
export function exitWithError(err: unknown, secrets: readonly string[] = []): never {
  const env = [process.env.SVC_API_KEY, process.env.AWS_SECRET_ACCESS_KEY, process.env.AWS_SESSION_TOKEN];
  const all = [...secrets, ...env.filter((s): s is string => !!s)];
  if (err instanceof EtlError) {
    process.stderr.write(`error [${err.code}]: ${redact(err.message, all)}\n`);
  } else {
    const e = err as Error;
    process.stderr.write(`unexpected error: ${redact(e?.stack ?? String(err), all)}\n`);
  }
  process.exit(exitCodeFor(err) || ExitCode.failure);
}

import { ConfigError, EtlError, ExitCode, exitCodeFor, type ErrorCode } from '../errors.js';
import { didYouMean } from '../config/messages.js';
import { redact } from '../redact.js';

/**
 * The one way errors leave the CLI: a message without a stack trace for known errors,
 * with API keys and AWS secrets redacted, and the documented exit code. With `--json` the
 * error is also printed on stdout as `{"error": {code, message, exitCode, issues?}}`, so a
 * script reading stdout gets JSON on failure as on success.
 */
export function exitWithError(err: unknown, secrets: readonly string[] = []): never {
  const env = [process.env.SVC_API_KEY, process.env.AWS_SECRET_ACCESS_KEY, process.env.AWS_SESSION_TOKEN];
  const all = [...secrets, ...env.filter((s): s is string => !!s)];
  const exitCode = exitCodeFor(err) || ExitCode.failure;
  let message: string;
  if (err instanceof EtlError) {
    message = redact(err.message, all);
    process.stderr.write(`error [${err.code}]: ${message}\n`);
  } else {
    const e = err as Error;
    message = redact(e?.message ?? String(err), all);
    process.stderr.write(`unexpected error: ${redact(e?.stack ?? String(err), all)}\n`);
  }
  const issues = err instanceof ConfigError ? err.issues.map((i) => ({ ...i, rule: redact(i.rule, all) })) : undefined;
  printJsonError({ code: err instanceof EtlError ? err.code : 'ETL_INTERNAL', message, exitCode, ...(issues ? { issues } : {}) });
  process.exit(exitCode);
}

/** A usage error (an unknown option, a bad value): exit 2, and with `--json` the same on stdout. */
export function exitWithUsage(msg: string): never {
  msg = withSuggestion(msg);
  process.stderr.write(`${msg}\nRun 'pipeline --help' for usage.\n`);
  printJsonError({ code: 'ETL_USAGE', message: msg, exitCode: ExitCode.configInvalid });
  process.exit(ExitCode.configInvalid);
}

/** The error as JSON on stdout, when the command line asks for JSON (`--json`, `--json=true`). */
function printJsonError(error: { code: ErrorCode; message: string; exitCode: number; issues?: unknown[] }): void {
  if (process.argv.some((a) => a === '--json' || a === '--json=true')) process.stdout.write(`${JSON.stringify({ error }, null, 2)}\n`);
}

/**
 * A sub-verb out of its choices (`pipeline lake snyc`, `models rnu`) gets the closest one, as an
 * unknown command gets it from yargs' `recommendCommands()`.
 */
export function withSuggestion(msg: string): string {
  const m = /Given: "([^"]*)", Choices: ((?:"[^"]*"(?:, )?)+)/.exec(msg);
  if (!m) return msg;
  const choices = [...m[2]!.matchAll(/"([^"]*)"/g)].map((c) => c[1]!);
  const guess = didYouMean(m[1]!, choices);
  return guess ? `${msg}\nDid you mean ${guess}?` : msg;
}

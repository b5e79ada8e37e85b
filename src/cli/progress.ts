import { progressLine } from '../run/index.js';
import type { ProgressEvent } from '../run/index.js';

export interface ProgressOptions {
  /** Least time between two progress lines in a log (not a terminal); default 10 s. */
  logIntervalMs?: number;
  now?: () => number;
}

/**
 * Renders progress on stderr. On a terminal, posting and collection are one line rewritten
 * in place (posted, ready, collected, CNY so far, time left at the rate limit); in logs (no
 * TTY), the same figures as plain lines at most every `logIntervalMs`, plus the line that
 * says everything is collected, so nightly logs stay short.
 */
export function makeProgress(
  stream: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
  opts: ProgressOptions = {},
): (e: ProgressEvent) => void {
  const tty = stream.isTTY === true;
  const interval = opts.logIntervalMs ?? 10_000;
  const now = opts.now ?? (() => Date.now());
  let open = false;
  let lastAt = Number.NEGATIVE_INFINITY;
  let lastText = '';
  return (e) => {
    if (e.kind === 'note') {
      if (open) stream.write('\n');
      open = false;
      stream.write(`${e.text}\n`);
      return;
    }
    if (e.posted === 0 && e.postsLeft === 0) return;
    const text = progressLine(e);
    const finished = e.pending === 0 && e.postsLeft === 0;
    if (tty) {
      stream.write(`\r\x1b[K${text}`);
      open = !finished;
      if (finished) stream.write('\n');
      return;
    }
    const t = now();
    if (text !== lastText && (finished || t - lastAt >= interval)) {
      lastAt = t;
      lastText = text;
      stream.write(`${text}\n`);
    }
  };
}

import type { ProgressEvent } from '../run/index.js';

/**
 * Renders progress on stderr: on a terminal, collection is one line rewritten in place;
 * in logs (no TTY), a collection line is printed only when a tenth of the tasks more are
 * done, so nightly logs stay short.
 */
export function makeProgress(stream: NodeJS.WriteStream = process.stderr): (e: ProgressEvent) => void {
  const tty = stream.isTTY === true;
  let open = false;
  let lastDecile = -1;
  return (e) => {
    if (e.kind === 'note') {
      if (open) stream.write('\n');
      open = false;
      stream.write(`${e.text}\n`);
      return;
    }
    const done = e.collected + e.failed;
    const total = done + e.pending;
    if (total === 0) return;
    const text = `collecting: ${done}/${total} done (${e.failed} failed), ${e.pending} waiting; ${Number(e.chargedCny).toFixed(4)} CNY charged so far`;
    if (tty) {
      stream.write(`\r\x1b[K${text}`);
      open = e.pending > 0;
      if (!open) stream.write('\n');
      return;
    }
    const decile = total === 0 ? 10 : Math.floor((done / total) * 10);
    if (decile !== lastDecile) {
      lastDecile = decile;
      stream.write(`${text}\n`);
    }
  };
}

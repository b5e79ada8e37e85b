import { readFile } from 'node:fs/promises';

/** A file whose bytes are not valid UTF-8, with where the first bad byte is (1-based line and column). */
export class InvalidUtf8Error extends Error {
  readonly code = 'INVALID_UTF8';
  constructor(
    readonly file: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`not valid UTF-8 at line ${line}, column ${column}: save the file as UTF-8; nothing was bought`);
  }
}

const STRICT = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a file as UTF-8 and refuses it when any byte sequence is not UTF-8. Node's own
 * `readFile(p, 'utf8')` turns such bytes into U+FFFD, so a keyword would be sent, searched
 * and paid for as something the user never wrote.
 */
export async function readUtf8Strict(path: string): Promise<string> {
  return decodeUtf8Strict(await readFile(path), path);
}

/** Decodes bytes read from `file` as UTF-8, refusing them with the line and column of the first bad byte. */
export function decodeUtf8Strict(bytes: Uint8Array, file: string): string {
  try {
    return STRICT.decode(bytes);
  } catch {
    const { line, column } = firstInvalid(bytes);
    throw new InvalidUtf8Error(file, line, column);
  }
}

/** Line and column (in characters) of the first byte that does not start or continue a valid UTF-8 sequence. */
function firstInvalid(bytes: Uint8Array): { line: number; column: number } {
  let line = 1;
  let column = 1;
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i]!;
    const len = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (len === 0 || i + len > bytes.length) return { line, column };
    try {
      STRICT.decode(bytes.subarray(i, i + len));
    } catch {
      return { line, column };
    }
    if (b === 0x0a) {
      line++;
      column = 1;
    } else column++;
    i += len;
  }
  return { line, column };
}

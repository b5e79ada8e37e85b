const MARK = '\u0000raw\u0000';
const QUOTED_MARK = JSON.stringify(MARK);
let collected: string[] | undefined;

/**
 * A value already serialized: `task_get` answers the same result on every fetch, so its
 * JSON is made once and spliced into each envelope by {@link stringifyWithRaw} instead of
 * being stringified again (the emulator must never be the bottleneck of a benchmark).
 */
export class RawJson {
  constructor(readonly text: string) {}

  toJSON(): string {
    if (!collected) throw new Error('RawJson is serialized only by stringifyWithRaw');
    collected.push(this.text);
    return MARK;
  }
}

/** `JSON.stringify` that writes each {@link RawJson} as its text. */
export function stringifyWithRaw(value: unknown): string {
  const raws: string[] = [];
  collected = raws;
  let text: string;
  try {
    text = JSON.stringify(value);
  } finally {
    collected = undefined;
  }
  if (raws.length === 0) return text;
  const parts = text.split(QUOTED_MARK);
  let out = parts[0] ?? '';
  for (let i = 1; i < parts.length; i++) out += raws[i - 1]! + parts[i]!;
  return out;
}

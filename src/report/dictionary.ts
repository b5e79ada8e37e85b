/**
 * Strings interned to small integers, so the payload names each keyword, domain or
 * pipeline once and refers to it by index everywhere else (the file stays small enough
 * to mail with a thousand keywords).
 */
export class Dictionary {
  readonly values: string[] = [];
  private readonly index = new Map<string, number>();

  /** The index of `value`, adding it when new. */
  id(value: string): number {
    let i = this.index.get(value);
    if (i === undefined) {
      i = this.values.length;
      this.values.push(value);
      this.index.set(value, i);
    }
    return i;
  }

  /** The index of `value`, or undefined when it was never added. */
  find(value: string): number | undefined {
    return this.index.get(value);
  }
}

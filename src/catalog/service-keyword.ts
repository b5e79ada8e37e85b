/**
 * The service reads a SERP `keyword` the way a form field is read: `%##` is decoded and
 * `+` becomes a space (spec, events `task_post`: "send `%25` for a literal percent sign and
 * `%2B` for a literal plus"). The spec states it for the events table, the one SERP task it
 * spells out; we take it to hold for every SERP `keyword` (the same service parses them),
 * and for no other field or family.
 */

/**
 * A keyword as it must be sent so that the service searches exactly `keyword`: `%` is sent
 * as `%25` and `+` as `%2B`; every other character (spaces included) goes as written, since
 * the body is JSON, not a form.
 *
 * @example encodeServiceKeyword('c++') === 'c%2B%2B'; encodeServiceKeyword('100% cotton') === '100%25 cotton'
 */
export function encodeServiceKeyword(keyword: string): string {
  return keyword.replace(/%/g, '%25').replace(/\+/g, '%2B');
}

/**
 * What the service searches for a posted `keyword`: `+` → space, then each run of `%##`
 * escapes decoded as UTF-8. A `%` not followed by two hex digits, or escapes that are not
 * valid UTF-8, stay as written (our choice: the spec does not say; a lenient decoder is
 * what form parsers do).
 */
export function decodeServiceKeyword(sent: string): string {
  return sent.replace(/\+/g, ' ').replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run.replace(/%([0-9a-fA-F]{2})/g, (esc, hex: string) => {
        const code = parseInt(hex, 16);
        return code < 0x80 ? String.fromCharCode(code) : esc;
      });
    }
  });
}

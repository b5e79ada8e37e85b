import type { z } from 'zod';
import { STATUS, type Status } from '../envelope.js';

/** A task that passed the endpoint's schema, or the status and message it fails with. */
export type TaskCheck = { ok: true; task: Record<string, unknown> } | { ok: false; status: Status; message: string };

/**
 * Checks one posted task against the catalog's schema for the endpoint, the same one
 * the client validates with. The message names every failing field and its rule.
 * Unknown fields alone give 40506; anything else 40501.
 */
export function validateTask(schema: z.ZodType | undefined, raw: unknown): TaskCheck {
  if (!schema) return { ok: false, status: STATUS.postInvalid, message: 'POST data is invalid: this endpoint takes no tasks.' };
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, task: parsed.data as Record<string, unknown> };
  const issues = parsed.error.issues;
  const unknown = issues.filter((i) => i.code === 'unrecognized_keys');
  if (unknown.length === issues.length) {
    const keys = unknown.flatMap((i) => ('keys' in i ? (i.keys as string[]) : []));
    return { ok: false, status: STATUS.unknownFields, message: `Unknown Fields: ${keys.map((k) => `'${k}'`).join(', ')}.` };
  }
  const parts = issues.map((i) => {
    const field = i.path.length > 0 ? i.path.map(String).join('.') : '(task)';
    return i.code === 'unrecognized_keys' && 'keys' in i
      ? `unknown fields ${(i.keys as string[]).map((k) => `'${k}'`).join(', ')}`
      : `'${field}' ${i.message}`;
  });
  return { ok: false, status: STATUS.invalidField, message: `Invalid Field: ${parts.join('; ')}.` };
}

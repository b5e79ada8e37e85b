import { STATUS, type Status } from '../envelope.js';
import { checkRequest, type RequestRules } from '../spec/index.js';

/** A task that passed the endpoint's rules, or the status and message it fails with. */
export type TaskCheck = { ok: true; task: Record<string, unknown> } | { ok: false; status: Status; message: string };

/**
 * Checks one posted task against the endpoint's request rules (spec/limits.ts, the emulator's
 * own reading of the spec's tables). The message names every failing field and its rule.
 * Unknown fields alone give 40506; anything else 40501.
 */
export function validateTask(rules: RequestRules | undefined, raw: unknown): TaskCheck {
  if (!rules) return { ok: false, status: STATUS.postInvalid, message: 'POST data is invalid: this endpoint takes no tasks.' };
  const { issues, unknownFields } = checkRequest(rules, raw);
  const unknown = unknownFields.map((k) => `'${k}'`).join(', ');
  if (issues.length === 0 && unknownFields.length === 0) return { ok: true, task: raw as Record<string, unknown> };
  if (issues.length === 0) return { ok: false, status: STATUS.unknownFields, message: `Unknown Fields: ${unknown}.` };
  const parts = issues.map((i) => `'${i.field}' ${i.message}`);
  if (unknownFields.length > 0) parts.push(`unknown fields ${unknown}`);
  return { ok: false, status: STATUS.invalidField, message: `Invalid Field: ${parts.join('; ')}.` };
}

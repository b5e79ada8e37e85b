import { fromMicros, toMicros } from './money.js';

/**
 * What a run says of the charges of the POSTs that created tasks found by tag: those whose answer
 * never came back are in the ledger as an estimate (`charge_estimated`), or unknown; those with
 * no ledger row (`unrecorded` tasks) are not in it. Empty when every such charge came with its
 * answer.
 */
export function lostChargesNote(
  estimated: readonly { callId: string; chargeCny: string | null; costUsd: string }[],
  unrecorded = 0,
): string {
  // A POST none of whose tasks was created cost nothing: nothing to say of it.
  const lost = estimated.filter((e) => toMicros(e.costUsd) !== 0n);
  if (lost.length === 0 && unrecorded === 0) return '';
  const priced = lost.filter((e) => e.chargeCny !== null);
  const sum = priced.reduce((s, e) => s + toMicros(e.chargeCny), 0n);
  const parts = ['The service charged the POST that created them, but its answer (with the charge) never came back'];
  if (priced.length > 0)
    parts.push(
      `the ledger holds ${fromMicros(sum)} CNY for ${priced.length === 1 ? 'it' : `${priced.length} such POSTs`}, estimated from id_list's USD cost (charge_estimated)`,
    );
  if (priced.length < lost.length)
    parts.push(`${lost.length - priced.length} POST(s) have no earlier charge to price them by: their charge is unknown`);
  if (unrecorded > 0)
    parts.push(
      `the POST of ${unrecorded} of them has no ledger row (sent by an older version of this tool): that charge is not in the ledger`,
    );
  return `${parts.join('; ')}. \`pipeline reconcile\` lists ${lost.length === 1 ? 'it' : lost.length === 0 ? 'the difference' : 'them'}`;
}

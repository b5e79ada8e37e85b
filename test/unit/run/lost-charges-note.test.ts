import { describe, expect, it } from 'vitest';
import { lostChargesNote } from '../../../src/post/lost-charges-note.js';

describe('lostChargesNote: what a run says of the charges of POSTs whose tasks were found by tag', () => {
  it('says nothing when every such charge came with its answer (a 5xx, or an answer landed before a crash)', () => {
    expect(lostChargesNote([], 0)).toBe('');
  });

  it('gives the estimate of a lost answer, and names the calls it could not price', () => {
    const note = lostChargesNote([
      { callId: 'a', chargeCny: '0.043000', costUsd: '0.006000' },
      { callId: 'b', chargeCny: null, costUsd: '0.006000' },
    ]);
    expect(note).toContain('never came back');
    expect(note).toContain('the ledger holds 0.043000 CNY for it, estimated');
    expect(note).toContain('1 POST(s) have no earlier charge to price them by');
    expect(note).toMatch(/lists them$/);
  });

  it('says nothing of a POST none of whose tasks was created (it cost nothing)', () => {
    expect(lostChargesNote([{ callId: 'a', chargeCny: '0.000000', costUsd: '0.000000' }], 0)).toBe('');
  });

  it('says a charge is missing from the ledger only for tasks whose POST has no row', () => {
    const note = lostChargesNote([], 3);
    expect(note).toContain('the POST of 3 of them has no ledger row');
    expect(note).not.toContain('estimated');
  });
});

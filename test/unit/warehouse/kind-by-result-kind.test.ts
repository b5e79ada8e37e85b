import { describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../../src/catalog/index.js';
import { CALLS_KIND, DECLARED_KINDS, kindOfPath } from '../../../src/warehouse/index.js';

// The kinds below are the ones the path rules gave before the catalog chose (checked for every catalog path, plain and .ai).
const TASK_ID = '0a1b2c3d-0000-4000-8000-000000000000';
const concrete = (path: string) => path.replace('{id}', TASK_ID).replace(/\{[a-z_]+\}/g, 'us');

describe("the warehouse picks a normalizer by the catalog's resultKind (issue 14 item 5)", () => {
  it('each catalog endpoint lands under the declared kind that reads its resultKind (format included), _calls for the lifecycle, else a generic kind', () => {
    for (const e of ENDPOINTS) {
      const declared = DECLARED_KINDS.find((k) => k.reads?.some((r) => r.resultKind === e.resultKind && (!r.format || r.format === e.format)));
      const kind = kindOfPath(concrete(e.path));
      if (e.mode === 'task_post' || ['tasks_ready', 'tasks_fixed', 'webhook_resend'].includes(e.resultKind ?? '')) expect(kind, e.id).toBe(CALLS_KIND);
      else if (declared) expect(kind, e.id).toBe(declared.kind);
      else expect(DECLARED_KINDS.map((k) => k.kind), e.id).not.toContain(kind);
    }
  });

  it('every declared kind that reads a resultKind is reached from the catalog; the others are path fallbacks for endpoints the catalog does not know', () => {
    const reached = new Set(ENDPOINTS.map((e) => kindOfPath(concrete(e.path))));
    for (const k of DECLARED_KINDS) {
      if (k.reads) expect(reached.has(k.kind), k.kind).toBe(true);
      else expect(reached.has(k.kind), k.kind).toBe(false);
    }
    expect(DECLARED_KINDS.filter((k) => !k.reads).map((k) => k.kind)).toEqual(['backlinks']);
    expect(kindOfPath('/v3/backlinks/backlinks/live')).toBe('backlinks');
  });

  it('serp results in other formats than advanced, and .ai variants, are not loaded into the declared tables by resultKind', () => {
    expect(kindOfPath(`/v3/serp/engA/organic/task_get/regular/${TASK_ID}`)).toBe('serp_eng_a_organic_regular');
    expect(kindOfPath('/v3/serp/engA/organic/live/advanced.ai')).toBe('serp_eng_a_organic_advanced_ai');
  });
});

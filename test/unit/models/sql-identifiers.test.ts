import { describe, expect, it } from 'vitest';
import { renderTemplate, sqlIdentifiers } from '../../../src/models/index.js';

describe('sqlIdentifiers', () => {
  it('finds table names after from and join, lower-cased, quoted ones included', () => {
    const ids = sqlIdentifiers(`select a.x from Stg_Serp__Items as a join "int_checks" using (task_id)`);
    expect(ids.has('stg_serp__items')).toBe(true);
    expect(ids.has('int_checks')).toBe(true);
  });

  it('ignores comments and string literals, so a commented-out model is no dependency', () => {
    const ids = sqlIdentifiers(`-- from rank_history\nselect 'spend_daily' as s, 'it''s rank_x' /* join old_model */ from ledger`);
    expect([...ids].sort()).toEqual(['as', 'from', 'ledger', 's', 'select']);
  });
});

describe('renderTemplate', () => {
  const sql = `select * from t {% if is_incremental %}where d >= {{ incremental_since }} and d > (select max(d) from {{ this }}){% else %}-- all{% endif %}`;

  it('keeps the incremental branch only for an incremental build, with the values filled in', () => {
    expect(renderTemplate(sql, { isIncremental: true, self: 'm', incrementalSince: "cast('2026-01-02' as DATE)" })).toBe(
      "select * from t where d >= cast('2026-01-02' as DATE) and d > (select max(d) from m)",
    );
    expect(renderTemplate(sql, { isIncremental: false, self: 'm' })).toBe('select * from t -- all');
  });

  it('keeps both branches when looking for dependencies', () => {
    const both = renderTemplate(`{% if is_incremental %}a_model{% else %}b_model{% endif %}`, { allBranches: true });
    expect(sqlIdentifiers(both)).toEqual(new Set(['a_model', 'b_model']));
  });
});

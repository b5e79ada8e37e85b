import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { DECLARED_TABLES, schemaMarkdown } from '../../../src/warehouse/index.js';

describe('docs/schema.md', () => {
  it('is the reference generated from the declarations (run `pipeline schema --write docs/schema.md` after changing them)', async () => {
    const committed = await readFile(new URL('../../../docs/schema.md', import.meta.url), 'utf8');
    expect(committed).toBe(schemaMarkdown());
  });

  it('documents every declared table and column', () => {
    const md = schemaMarkdown();
    for (const t of DECLARED_TABLES) {
      expect(md).toContain(`### \`${t.name}\``);
      for (const c of t.columns) expect(md).toContain(`| \`${c.name}\` |`);
    }
  });
});

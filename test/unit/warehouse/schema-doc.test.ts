import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SQL_DIR, discoverModels, martsMarkdown, martsMarkdownOf } from '../../../src/models/index.js';
import { DECLARED_TABLES, schemaMarkdown } from '../../../src/warehouse/index.js';

describe('docs/schema.md', () => {
  it('is the reference generated from the declarations and the marts\' sidecars (run `npm run schema` after changing them)', async () => {
    const committed = await readFile(new URL('../../../docs/schema.md', import.meta.url), 'utf8');
    expect(committed).toBe(schemaMarkdown(await martsMarkdownOf()));
  });

  it('documents every declared table and column', () => {
    const md = schemaMarkdown();
    for (const t of DECLARED_TABLES) {
      expect(md).toContain(`### \`${t.name}\``);
      for (const c of t.columns) expect(md).toContain(`| \`${c.name}\` |`);
    }
  });

  it('documents every mart: its grain, key, and each column of its sidecar with type, unit and description', async () => {
    const models = await discoverModels(DEFAULT_SQL_DIR);
    const md = martsMarkdown(models);
    const marts = models.filter((m) => m.layer === 'marts');
    // Every .sql under sql/marts is found as a mart (the list is the folder's, so a new mart needs no edit here).
    const files = (await readdir(join(DEFAULT_SQL_DIR, 'marts'))).filter((f) => f.endsWith('.sql')).map((f) => f.slice(0, -4));
    expect(marts.map((m) => m.name).sort()).toEqual(files.sort());
    expect(files).toEqual(expect.arrayContaining(['domain_visibility_daily', 'locations', 'rank_history', 'search_volume_trends', 'share_of_serp_daily', 'spend_daily']));
    for (const m of marts) {
      expect(md).toContain(`### \`${m.name}\``);
      for (const [name, c] of Object.entries(m.sidecar.columns ?? {})) {
        const row = md.split('\n').find((l) => l.startsWith(`| \`${name}\``) && l.includes(c.description));
        expect(row, `${m.name}.${name}`).toBeDefined();
        expect(row).toContain(`| ${c.type} |`);
        if (c.unit) expect(row).toContain(c.unit);
      }
    }
    expect(md).toContain('| `visibility_share` | DOUBLE | fraction 0-1 (0.26 = 26%) |');
    expect(md).toMatch(/\| `visibility_pct` \| DOUBLE \| [^|]*not percent \| \*\*Deprecated:\*\* read visibility_share/);
    expect(md).toContain("SET file_search_path = '/path/to/warehouse';");
  });
});

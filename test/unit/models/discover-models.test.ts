import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoverModels } from '../../../src/models/index.js';

describe('discoverModels refuses a project it cannot build, naming the file', () => {
  let dir: string;
  const put = async (rel: string, text: string) => {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), text);
  };
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pipeline-discover-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('a model without a sidecar', async () => {
    await put('marts/a.sql', 'select 1');
    await expect(discoverModels(dir)).rejects.toThrow(/model a.sql has no sidecar: expected .*a\.yml/);
  });

  it('a sidecar without a grain, or with an unknown test kind', async () => {
    await put('marts/a.sql', 'select 1');
    await put('marts/a.yml', 'tests:\n  - unique_ish: [x]\n');
    await expect(discoverModels(dir)).rejects.toThrow(/a\.yml is invalid: .*grain/);
  });

  it('a declared source the SQL never reads', async () => {
    await put('staging/stg_x__y.sql', 'select * from other_table');
    await put('staging/stg_x__y.yml', 'grain: one row per y\nsources:\n  y_table: [id]\n');
    await expect(discoverModels(dir)).rejects.toThrow(/declares source y_table, but .*stg_x__y.sql never reads it/);
  });

  it('a full_refresh_on input the SQL never reads', async () => {
    await put('marts/inc.sql', 'select d from facts');
    await put('marts/inc.yml', 'grain: one row per d\nmaterialized: incremental\nincremental:\n  key: d\n  full_refresh_on: [flags]\n');
    await expect(discoverModels(dir)).rejects.toThrow(/inc lists flags under incremental.full_refresh_on, but .*inc.sql never reads it/);
    await put('marts/inc.sql', 'select d from facts join flags using (d)');
    expect((await discoverModels(dir))[0]!.sidecar.incremental).toEqual({ key: 'd', full_refresh_on: ['flags'] });
  });

  it('two models with one name, and an incremental model without a key', async () => {
    await put('staging/dup.sql', 'select 1');
    await put('staging/dup.yml', 'grain: one row');
    await put('marts/dup.sql', 'select 1');
    await put('marts/dup.yml', 'grain: one row');
    await expect(discoverModels(dir)).rejects.toThrow(/two models are named dup/);
    await rm(join(dir, 'marts'), { recursive: true });
    await put('marts/inc.sql', 'select 1');
    await put('marts/inc.yml', 'grain: one row\nmaterialized: incremental\n');
    await expect(discoverModels(dir)).rejects.toThrow(/inc is incremental but its sidecar has no incremental.key/);
  });
});

describe('discoverModels in a process that runs many nights', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pipeline-discover-'));
    await mkdir(join(dir, 'marts'), { recursive: true });
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('reads a changed, added or removed file again, and a caller that edits its models does not change the next', async () => {
    await writeFile(join(dir, 'marts/a.sql'), 'select 1 as x');
    await writeFile(join(dir, 'marts/a.yml'), 'grain: one row\n');
    const first = await discoverModels(dir);
    expect(first.map((m) => [m.name, m.sidecar.grain])).toEqual([['a', 'one row']]);
    first[0]!.sidecar.grain = 'edited by a caller';
    first[0]!.dependsOn.push('nothing');
    expect((await discoverModels(dir))[0]).toMatchObject({ sidecar: { grain: 'one row' }, dependsOn: [] });
    // The same size, a new text: read again.
    await writeFile(join(dir, 'marts/a.yml'), 'grain: two rows\n'.slice(0, 'grain: one row\n'.length));
    expect((await discoverModels(dir))[0]!.sidecar.grain).toBe('two rows');
    await writeFile(join(dir, 'marts/b.sql'), 'select * from a');
    await writeFile(join(dir, 'marts/b.yml'), 'grain: one row per x\n');
    expect((await discoverModels(dir)).map((m) => [m.name, m.dependsOn])).toEqual([
      ['a', []],
      ['b', ['a']],
    ]);
    await rm(join(dir, 'marts/a.sql'));
    await rm(join(dir, 'marts/a.yml'));
    expect((await discoverModels(dir)).map((m) => m.name)).toEqual(['b']);
  });
});

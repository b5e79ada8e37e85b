import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { RUN_MOVES, RUN_STATES, runStatesInto, TASK_MOVES, TASK_STATES, taskStatesInto, schemaMarkdown } from '../../../src/warehouse/index.js';

describe('the task and run lifecycle, as data', () => {
  it('every move goes between known states', () => {
    for (const [from, tos] of Object.entries(TASK_MOVES)) {
      expect(TASK_STATES).toContain(from);
      for (const to of tos) expect(TASK_STATES).toContain(to);
    }
    for (const [from, tos] of Object.entries(RUN_MOVES)) {
      expect(RUN_STATES).toContain(from);
      for (const to of tos) expect(RUN_STATES).toContain(to);
    }
  });

  it('guards: a collected or failed task never goes back to posted; only posted tasks are collected', () => {
    expect(taskStatesInto('posted')).toEqual(['planned', 'unknown']);
    expect(taskStatesInto('collected')).toEqual(['posted', 'collected']);
    expect(taskStatesInto('failed')).toEqual(['planned', 'unknown', 'posted']);
    expect(taskStatesInto('unsent')).toEqual(['planned', 'unknown']);
    expect(TASK_MOVES.failed).toEqual([]);
    expect(runStatesInto('superseded')).toEqual(['running', 'partial', 'failed']);
    expect(runStatesInto('running')).toEqual(['running', 'partial', 'failed']);
  });

  it('the model test on tasks.state accepts exactly the states of the union', async () => {
    const sidecar = parse(await readFile(new URL('../../../sql/staging/stg_pipeline__tasks.yml', import.meta.url), 'utf8')) as {
      tests: { accepted_values?: { column: string; values: string[] } }[];
    };
    const test = sidecar.tests.find((t) => t.accepted_values?.column === 'state');
    expect(test?.accepted_values?.values).toEqual([...TASK_STATES]);
  });

  it('the schema reference names every state', () => {
    const md = schemaMarkdown();
    for (const s of [...TASK_STATES, ...RUN_STATES]) expect(md).toContain(s);
  });

  it('docs/lifecycle.md draws every state and move', async () => {
    const doc = await readFile(new URL('../../../docs/lifecycle.md', import.meta.url), 'utf8');
    for (const [from, tos] of Object.entries(TASK_MOVES)) for (const to of tos) expect(doc).toContain(`${from} --> ${to}`);
    for (const [from, tos] of Object.entries(RUN_MOVES)) for (const to of tos) expect(doc).toContain(`${from} --> ${to}`);
  });
});

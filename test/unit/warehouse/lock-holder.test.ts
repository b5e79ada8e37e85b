import { describe, expect, it } from 'vitest';
import { describeHolder } from '../../../src/warehouse/wait-for-lock.js';

const held = (pid: number) => `IO Error: Could not set lock on file "w/warehouse.duckdb": Conflicting lock is held in /usr/bin/node (PID ${pid}). See also https://duckdb.org/docs`;

describe('who holds the warehouse, as a person should read it', () => {
  it('names the pipeline command when the holder is this tool, not only the program', () => {
    const argv = (pid: number) => (pid === 4242 ? ['/usr/bin/node', '/opt/pipeline/bin/pipeline.mjs', 'run', '--warehouse', 'w', 'pipelines/keywords.yaml'] : undefined);
    expect(describeHolder(held(4242), argv)).toEqual({ who: '`pipeline run --warehouse w pipelines/keywords.yaml` (PID 4242)', pipeline: true });
    expect(describeHolder(held(7), (pid) => (pid === 7 ? ['node', 'bin/pipeline.mjs', 'schedule', 'pipelines/'] : undefined))).toEqual({
      who: '`pipeline schedule pipelines/` (PID 7)',
      pipeline: true,
    });
  });

  it("keeps DuckDB's words for any other holder, or when the process cannot be read", () => {
    expect(describeHolder(held(99), () => ['/usr/bin/python3', '-m', 'jupyter', 'notebook'])).toEqual({ who: '/usr/bin/node (PID 99)', pipeline: false });
    expect(describeHolder(held(99), () => undefined)).toEqual({ who: '/usr/bin/node (PID 99)', pipeline: false });
    expect(describeHolder('Could not set lock on file "w/warehouse.duckdb"', () => undefined)).toEqual({ who: 'another process', pipeline: false });
  });

  it('reads the command line of a real process', () => {
    // This test's own process is vitest under node: not a pipeline command.
    expect(describeHolder(held(process.pid)).pipeline).toBe(false);
  });
});

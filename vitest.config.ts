import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // dist/ built once when not current: CLI children run it (bin/pipeline.mjs), never a stale one.
    globalSetup: ['test/global-setup.ts'],
    allowOnly: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // DuckDB files and loopback servers: keep the two cores for the tests themselves.
    pool: 'forks',
    maxWorkers: 2,
    // A worker runs its files one after another in one process, each file importing the modules
    // it needs once for the worker rather than once per file: a fresh process and module graph per
    // file cost about 0.65 s of CPU a file (measured on 61 files: 164 s of CPU isolated, 124 s not),
    // over 2 minutes of the suite's CPU on two cores. Every test still makes its own warehouse,
    // emulator and temp folder; those that set an environment variable put it back.
    isolate: false,
    reporters: ['default', 'json'],
    outputFile: { json: '.tmp/vitest-report.json' },
  },
});

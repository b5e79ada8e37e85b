import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // dist/ built once when not current: CLI children run it (bin/pipeline.mjs), never a stale one.
    globalSetup: ['test/global-setup.ts'],
    allowOnly: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Three files at once on the two cores: a third of a file's time is spent waiting (on the
    // emulator's scaled minutes, on the spec's whole-second id_list windows, on timeouts and
    // back-offs a test provokes on purpose), and the third file fills those waits. Measured on
    // the 2-core machine, 2026-11-28: 2 at once 484 s (965 s of test time, 704 s of it CPU),
    // 3 at once 421 s, 4 at once 414 s, but crash.test's one test went from 39 s to 55 s against
    // its 60 s bound. DuckDB files and loopback servers: a process per file.
    pool: 'forks',
    maxWorkers: 3,
    // Each file in a fresh process (vitest's default `isolate`). Tried without (`isolate: false`,
    // 2026-11-28): the imports fell from 82.8 s to 10.7 s of the suite, but the tests' own time
    // rose from 973 s to 1,075 s (likely: a worker's heap grows over its files, and each
    // in-process night's full collections between steps, collectGarbage, walk all of it): 549 s
    // in CI against 551, for files that no longer start clean. Not kept.
    reporters: ['default', 'json'],
    outputFile: { json: '.tmp/vitest-report.json' },
  },
});

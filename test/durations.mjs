// Writes test/durations.json (each test file's seconds) from vitest's JSON report (.tmp/vitest-report.json):
// the order test/sequencer.ts starts the files in. Run after a full `npm test` on a quiet machine.
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const report = JSON.parse(readFileSync('.tmp/vitest-report.json', 'utf8'));
const secs = Object.fromEntries(
  report.testResults
    .map((f) => [relative(process.cwd(), f.name), Math.round((f.endTime - f.startTime) / 100) / 10])
    .sort(([a], [b]) => (a < b ? -1 : 1)),
);
writeFileSync('test/durations.json', `${JSON.stringify(secs, null, 2)}\n`);
console.log(`test/durations.json: ${Object.keys(secs).length} files`);

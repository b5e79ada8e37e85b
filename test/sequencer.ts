import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Starts the longest test files first (their seconds in test/durations.json, from a clean-clone
 * CI run; `node test/durations.mjs` refreshes it after a full run), files it does not know before
 * them, within vitest's order of the projects. Vitest's own order ranks by the durations of its
 * cache, which a fresh clone does not have, and then by file size: the few-line files whose
 * tests come from a helper (crash-more.test.ts, readings-money-others.test.ts) started last
 * and ran on alone at the end, about 15 s of the suite's 6 minutes.
 */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const order = await super.sort(files);
    const root = this.ctx.config.root;
    const known = JSON.parse(readFileSync(join(root, 'test', 'durations.json'), 'utf8')) as Record<string, number>;
    const project = new Map<string, number>();
    for (const f of order) if (!project.has(f.project.name)) project.set(f.project.name, project.size);
    const secs = (f: TestSpecification) => known[relative(root, f.moduleId)] ?? Number.MAX_SAFE_INTEGER;
    return [...order].sort((a, b) => project.get(a.project.name)! - project.get(b.project.name)! || secs(b) - secs(a));
  }
}

import { describe, expect, it } from 'vitest';
import { parsePipeline } from '../../../src/config/index.js';
import { crawlReadsOf, CRAWL_POST_ENDPOINTS, expandJob, JOB_KINDS, jobKindOf, jobSchema } from '../../../src/jobs/index.js';

describe('the job kinds registry (issue 14 item 5: a job kind is one module)', () => {
  it('holds one module per kind, each declaring the kind its schema accepts, in the union order', () => {
    const kinds = JOB_KINDS.map((k) => k.kind);
    expect(new Set(kinds).size).toBe(kinds.length);
    for (const k of JOB_KINDS) expect(k.schema.shape.kind.value).toBe(k.kind);
    expect(jobSchema.options.map((o) => o.shape.kind.value)).toEqual(kinds);
    expect(() => jobKindOf('nope')).toThrow(/unknown job kind nope/);
  });

  it('dispatches each job to its own module', () => {
    const p = parsePipeline(
      'name: p\njobs:\n  - kind: backlinks\n    targets: [a.com, a.com, b.com]\n  - kind: embeddings\n',
      'p.yaml',
      {},
    );
    expect(expandJob(p.jobs[0]!).specs.map((s) => [s.endpoint.id, s.spec.target])).toEqual([
      ['backlinks.referring_domains.live', 'a.com'],
      ['backlinks.referring_domains.live', 'b.com'],
    ]);
    expect(expandJob(p.jobs[1]!)).toEqual({ specs: [], repeatsDropped: 0 });
  });

  it('says which tasks are crawls and what to read of them, with defaults for a job no longer in the file', () => {
    expect([...CRAWL_POST_ENDPOINTS]).toEqual(['on_page.task_post']);
    const p = parsePipeline(
      'name: p\njobs:\n  - kind: on_page\n    name: crawl\n    targets: [a.com]\n    read: [links]\n    max_items: 50\n    page_size: 10\n',
      'p.yaml',
      {},
    );
    expect(crawlReadsOf(p.jobs, 'crawl')).toEqual({ read: ['links'], maxItems: 50, pageSize: 10 });
    expect(crawlReadsOf(p.jobs, 'gone')).toEqual({ read: ['pages'], maxItems: 2_001_000 });
  });
});

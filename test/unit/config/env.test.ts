import type { Pipeline, SerpJob } from '../../../src/config/index.js';
import { describe, expect, it } from 'vitest';
import { parsePipeline } from '../../../src/config/index.js';

/** The first job, which these files declare as a SERP job. */
function serpOf(p: Pipeline): SerpJob {
  const job = p.jobs[0]!;
  if (job.kind !== 'serp') throw new Error(`expected a serp job, got ${job.kind}`);
  return job;
}

const text = (extra: string) =>
  ['name: shoes', 'jobs:', '  - kind: serp', '    locations: [2840]', '    keywords: [running shoes]', extra].join('\n');

describe('${NAME} references', () => {
  it('are filled from the env passed in', () => {
    const p = parsePipeline(text('    track_domains: ["${SITE}", "shop.${SITE}"]'), 'p.yaml', { SITE: 'example.com' });
    expect(serpOf(p).track_domains).toEqual(['example.com', 'shop.example.com']);
  });

  it('type an unquoted value as YAML would, and keep a quoted one as text', () => {
    const p = parsePipeline(text('    depth: ${DEPTH}'), 'p.yaml', { DEPTH: '50' });
    expect(serpOf(p).depth).toBe(50);
    const quoted = parsePipeline(text('    keywords: ["${KW}"]').replace('    keywords: [running shoes]\n', ''), 'p.yaml', { KW: '1080' });
    expect(serpOf(quoted).keywords).toEqual(['1080']);
  });

  it('keep $${NAME} as literal text', () => {
    const p = parsePipeline(text('    keywords: ["price $${X}"]').replace('    keywords: [running shoes]\n', ''), 'p.yaml', {});
    expect(serpOf(p).keywords).toEqual(['price ${X}']);
  });

  it('default to process.env', () => {
    process.env.PIPELINE_TEST_SITE = 'nike.com';
    try {
      const p = parsePipeline(text('    track_domains:\n      - ${PIPELINE_TEST_SITE}'), 'p.yaml');
      expect(serpOf(p).track_domains).toEqual(['nike.com']);
    } finally {
      delete process.env.PIPELINE_TEST_SITE;
    }
  });
});

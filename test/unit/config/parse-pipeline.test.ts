import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parsePipeline, type Pipeline, type SerpJob } from '../../../src/config/index.js';

/** The first job, which these files declare as a SERP job. */
function serpOf(p: Pipeline): SerpJob {
  const job = p.jobs[0]!;
  if (job.kind !== 'serp') throw new Error(`expected a serp job, got ${job.kind}`);
  return job;
}

const fixture = (name: string) => new URL(`../../fixtures/config/${name}`, import.meta.url);
const read = (url: URL) => readFileSync(url, 'utf8');

describe('parsePipeline on valid files', () => {
  it('keeps what the file says and fills every default', () => {
    const p: Pipeline = parsePipeline(read(fixture('valid.yaml')), 'valid.yaml', {});
    expect(p.name).toBe('shoes-uk');
    expect(p.budget_cny).toBe(2.5);
    expect(p.jobs[0]).toEqual({
      kind: 'serp',
      name: 'desktop-us',
      labels: [],
      engines: ['engA', 'engB'],
      type: 'organic',
      mode: 'standard',
      collect: 'pull',
      priority: 2,
      depth: 50,
      devices: ['desktop'],
      os: 'macos',
      locations: [2840, 'London,England,United Kingdom'],
      languages: ['en', 'English'],
      keywords: ['Running Shoes', 'running shoes'],
      track_domains: ['nike.com'],
      params: {},
    });
    expect(p.jobs[1]).toEqual({
      kind: 'serp',
      name: 'serp-1',
      labels: [],
      engines: ['engA'],
      type: 'organic',
      mode: 'standard',
      collect: 'pull',
      priority: 1,
      depth: 10, // the spec's default
      devices: ['desktop'],
      locations: [2826],
      languages: ['en'],
      keywords: ['trail shoes'],
      params: {},
    });
  });

  it('leaves optional fields without defaults out', () => {
    const p = parsePipeline('name: a\njobs:\n  - kind: serp\n    locations: [1]\n    keywords: [x]\n', 'a.yaml', {});
    expect(p).not.toHaveProperty('budget_cny');
    expect(p).not.toHaveProperty('description');
    expect(p.jobs[0]).not.toHaveProperty('os');
    expect(p.jobs[0]).not.toHaveProperty('track_domains');
  });

  it('parses the shipped pipelines/keywords.yaml', () => {
    const p = parsePipeline(read(new URL('../../../pipelines/keywords.yaml', import.meta.url)), 'keywords.yaml', {});
    expect(p.name).toBe('keywords');
    expect(p.budget_cny).toBe(5);
    expect(p.jobs.map((j) => j.kind)).toEqual(['serp', 'search_volume']);
    const job = serpOf(p);
    expect(job).toMatchObject({ kind: 'serp', engines: ['engA'], depth: 100, locations: [2840, 2826], languages: ['en'] });
    expect(job.track_domains).toEqual(['runnersworld.com', 'outdoorgearlab.com']);
    expect(job.keywords.length).toBeGreaterThanOrEqual(18);
    const lower = job.keywords.map((k) => k.toLowerCase());
    expect(new Set(lower).size).toBe(lower.length - 1); // one duplicate that differs only by case
    expect(job.keywords.some((k) => k !== k.toLowerCase())).toBe(true);
  });

  it('accepts aliases, so one job can reuse another', () => {
    const text = 'name: a\njobs:\n  - &j {kind: serp, locations: [1], keywords: [x]}\n  - *j\n';
    expect(parsePipeline(text, 'a.yaml', {}).jobs.map((j) => j.name)).toEqual(['serp-0', 'serp-1']);
  });
});

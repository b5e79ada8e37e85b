import { describe, expect, it } from 'vitest';
import { parsePipeline } from '../../../src/config/index.js';
import { ConfigError, type ConfigIssue } from '../../../src/errors.js';

function issuesOf(text: string): Array<[number, string, string]> {
  try {
    parsePipeline(text, 'p.yaml', {});
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues.map((i: ConfigIssue) => [i.line, i.field, i.rule]);
  }
  throw new Error('expected a ConfigError');
}

const pipeline = (...jobLines: string[]) => ['name: p', 'jobs:', ...jobLines].join('\n');

describe('the job kinds refuse what the service would, with file line, field and rule', () => {
  it('a SERP type the engine does not serve, and mobile events', () => {
    expect(
      issuesOf(pipeline('  - kind: serp', '    engines: [engA, engB]', '    type: news', '    locations: [2840]', '    keywords: [x]')),
    ).toEqual([[4, 'jobs[0].engines[1]', "engine 'engB' has no 'news' SERP; its types: organic"]]);
    expect(
      issuesOf(pipeline('  - kind: serp', '    type: events', '    devices: [mobile]', '    locations: [2840]', '    keywords: [x]')),
    ).toEqual([[5, 'jobs[0].devices', 'events results are desktop only']]);
  });

  it('live-only kinds refuse standard mode; labs functions take keywords or targets, not both', () => {
    expect(issuesOf(pipeline('  - kind: trends', '    mode: standard', '    keywords: [x]'))).toEqual([
      [4, 'jobs[0].mode', 'this kind is served live only; leave mode out or write live'],
    ]);
    expect(issuesOf(pipeline('  - kind: labs', '    function: ranked_keywords', '    keywords: [x]', '    locations: [2840]'))).toEqual([
      [3, 'jobs[0].targets', 'ranked_keywords asks about domains: at least one target'],
      [5, 'jobs[0].keywords', 'ranked_keywords takes targets, not keywords'],
    ]);
  });

  it('trends take location codes and an ordered date range', () => {
    expect(
      issuesOf(
        pipeline(
          '  - kind: trends',
          '    keywords: [x]',
          '    locations: [London]',
          '    date_from: 2026-02-01',
          '    date_to: 2026-01-01',
        ),
      ),
    ).toEqual([
      [5, 'jobs[0].locations[0]', 'trends take a location_code (a number), not a name'],
      [7, 'jobs[0].date_to', 'must not be before date_from'],
    ]);
  });

  it('a generic job names an unknown endpoint: the closest ids are suggested', () => {
    const [issue] = issuesOf(
      pipeline('  - kind: endpoint', '    endpoint: merchant.engA.product.task_post', '    tasks: [{ keyword: x }]'),
    );
    expect(issue![0]).toBe(4);
    expect(issue![1]).toBe('jobs[0].endpoint');
    expect(issue![2]).toContain("'merchant.engA.product.task_post' is not a task_post or live endpoint");
    expect(issue![2]).toContain('merchant.engA.products.task_post');
  });

  it("a generic job's tasks and template are checked against the endpoint's own rules", () => {
    expect(
      issuesOf(
        pipeline(
          '  - kind: endpoint',
          '    endpoint: ai_optimization.ai_keyword_data.keywords_search_volume.live',
          '    tasks:',
          '      - { keywords: [a], location_code: 2840 }',
        ),
      ),
    ).toEqual([[6, 'jobs[0].tasks[0].language_name', 'language_name or language_code is required']]);
    expect(
      issuesOf(
        pipeline(
          '  - kind: endpoint',
          '    endpoint: serp.engA.organic.task_post',
          '    params: { keyword: "{keyword}", depth: 900 }',
          '    keywords: [a]',
          '    locations: [2840]',
        ),
      ),
    ).toEqual([[5, 'jobs[0].params.depth', 'at most 700']]);
  });

  it('a generic job with a placeholder and no values, or values with no placeholder', () => {
    expect(
      issuesOf(pipeline('  - kind: endpoint', '    endpoint: backlinks.referring_domains.live', '    params: { target: "{target}" }')),
    ).toEqual([[3, 'jobs[0].targets', 'the template uses {target}: give targets']]);
    expect(
      issuesOf(
        pipeline(
          '  - kind: endpoint',
          '    endpoint: backlinks.referring_domains.live',
          '    params: { target: a.com }',
          '    keywords: [x]',
        ),
      ),
    ).toEqual([[6, 'jobs[0].keywords', 'keywords are given but params never uses {keyword} or "{keywords}"']]);
  });

  it('embeddings: ada-002 has one size', () => {
    expect(issuesOf(pipeline('  - kind: embeddings', '    model: text-embedding-ada-002', '    dimensions: 256'))).toEqual([
      [5, 'jobs[0].dimensions', 'text-embedding-ada-002 has 1536 dimensions only'],
    ]);
  });
});

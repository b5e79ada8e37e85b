import { describe, expect, it } from 'vitest';
import { parsePipeline, type Pipeline } from '../../../src/config/index.js';
import { ConfigError } from '../../../src/errors.js';

/** A SERP job tracking `n` domains. */
const withTracked = (n: number) =>
  [
    'name: shoes',
    'jobs:',
    '  - kind: serp',
    '    locations: [2840]',
    '    keywords: [running shoes]',
    `    track_domains: [${Array.from({ length: n }, (_, i) => `site${i}.example`).join(', ')}]`,
  ].join('\n');

const trackedOf = (p: Pipeline) => (p.jobs[0]!.kind === 'serp' ? p.jobs[0]!.track_domains : undefined);

describe('track_domains: your domain and up to nine competitors', () => {
  it('takes 10 domains', () => {
    expect(trackedOf(parsePipeline(withTracked(10), 'p.yaml', {}))).toHaveLength(10);
  });

  it('refuses 11 with the limit, the count and the line', () => {
    let err: unknown;
    try {
      parsePipeline(withTracked(11), 'p.yaml', {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues).toEqual([
      {
        file: 'p.yaml',
        line: 6,
        column: 20,
        field: 'jobs[0].track_domains',
        rule: 'at most 10 tracked domains per job (your own and your competitors); got 11; keep the 10 that matter most',
      },
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { parsePipeline, resolveCollection } from '../../../src/config/index.js';

const file = (collection: string) => `name: c\n${collection}jobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [a]\n`;

describe('collection settings', () => {
  it('pulls by default, so a pipeline without the block behaves as before', () => {
    const p = parsePipeline(file(''), 'c.yaml', {});
    expect(p.collection.mode).toBe('auto');
    expect(resolveCollection(p.collection)).toEqual({ mode: 'pull', deadlineMs: 30 * 60_000 });
  });

  it('pushes in auto mode once a public URL is known, from the file or the command line', () => {
    const p = parsePipeline(
      file('collection:\n  public_url: https://etl.example.com/hooks/\n  listen: "0.0.0.0:9000"\n  deadline_minutes: 5\n'),
      'c.yaml',
      {},
    );
    expect(resolveCollection(p.collection)).toMatchObject({
      mode: 'push',
      host: '0.0.0.0',
      port: 9000,
      publicUrl: 'https://etl.example.com/hooks',
      deadlineMs: 300_000,
      callback: 'postback',
    });
    const q = parsePipeline(file(''), 'c.yaml', {});
    expect(resolveCollection(q.collection, { publicUrl: 'https://x.example.com', deadlineMs: 1000 })).toMatchObject({
      mode: 'push',
      publicUrl: 'https://x.example.com',
      deadlineMs: 1000,
    });
    expect(resolveCollection(q.collection, { mode: 'push', listen: '[::1]:0' })).toMatchObject({
      mode: 'push',
      host: '::1',
      port: 0,
      publicUrl: undefined,
    });
  });

  it('refuses bad values with file, line and rule, and bad command-line values before any call', () => {
    expect(() =>
      parsePipeline(file('collection:\n  mode: sometimes\n  public_url: "https://x.example.com/cb?a=1"\n  max_body_mb: 0\n'), 'c.yaml', {}),
    ).toThrow(
      /c\.yaml:3:9 {2}collection\.mode: one of auto, pull, push[\s\S]*collection\.public_url: no query or fragment[\s\S]*collection\.max_body_mb: a positive number/,
    );
    expect(() => resolveCollection(undefined, { listen: 'localhost' })).toThrow(/collection\.listen: host:port/);
    expect(() => resolveCollection(undefined, { publicUrl: 'ftp://x' })).toThrow(/collection\.public_url: an absolute http\(s\) URL/);
  });
});

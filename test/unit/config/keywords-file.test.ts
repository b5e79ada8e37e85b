import { describe, expect, it } from 'vitest';
import { loadPipeline } from '../../../src/config/index.js';
import { parseKeywordsFile } from '../../../src/config/keywords-file.js';
import { ConfigError } from '../../../src/errors.js';

/** An in-memory file system: the loader takes `readFile`, so no test touches the disk. */
function files(map: Record<string, string>) {
  return async (p: string) => {
    const hit = Object.entries(map).find(([k]) => p.endsWith(k));
    if (!hit) throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
    return hit[1];
  };
}

const pipeline = (kind: string, extra: string) => `name: f\njobs:\n  - kind: ${kind}\n    locations: [2840]\n${extra}`;

describe('keywords from a file', () => {
  it('reads a .txt one keyword a line, skipping blank lines and # comments, after the inline ones', async () => {
    const p = await loadPipeline('/p/f.yaml', {
      env: {},
      readFile: files({
        'f.yaml': pipeline('serp', '    keywords: [inline one]\n    keywords_file: kw/list.txt\n'),
        'kw/list.txt': '# seeds\nalpha\n\n  beta  \r\ngamma\n',
      }),
    });
    expect((p.jobs[0] as { keywords: string[] }).keywords).toEqual(['inline one', 'alpha', 'beta', 'gamma']);
  });

  it('reads the keyword column of a .csv, quoted cells included, or the first column without a header', () => {
    expect(parseKeywordsFile('volume,keyword\n10,"shoes, red"\n20,"say ""hi"""\n', 'a.csv').map((k) => k.keyword)).toEqual([
      'shoes, red',
      'say "hi"',
    ]);
    expect(parseKeywordsFile('running shoes,1\ntrail shoes,2\n', 'b.csv').map((k) => k.keyword)).toEqual(['running shoes', 'trail shoes']);
  });

  it('refuses a .csv whose header names no keywords column, rather than buy the header as a keyword', async () => {
    const err = await loadPipeline('/p/f.yaml', {
      env: {},
      readFile: files({
        'f.yaml': pipeline('serp', '    keywords_file: kws.csv\n'),
        'kws.csv': 'word,vol\nrunning shoes,1200\ntrail shoes,\n',
      }),
    }).catch((e) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const [issue] = (err as ConfigError).issues;
    expect([issue!.file.split('/').pop(), issue!.line, issue!.field]).toEqual(['kws.csv', 1, 'jobs[0].keywords_file']);
    expect(issue!.rule).toMatch(
      /^its first line \(word, vol\) is a header that names no keywords column: name that column one of keyword, keywords/,
    );
    // Numbers on the first row too: no header, every row is a keyword.
    expect(parseKeywordsFile('running shoes,1\ntrail shoes,2\n', 'b.csv').map((k) => k.keyword)).toEqual(['running shoes', 'trail shoes']);
    // One column cannot tell: its first row is a keyword.
    expect(parseKeywordsFile('word\nshoes\n', 'c.csv').map((k) => k.keyword)).toEqual(['word', 'shoes']);
  });

  it('reports a missing file and a too-long keyword with their file and line, all at once', async () => {
    const long = 'k'.repeat(81);
    const err = await loadPipeline('/p/f.yaml', {
      env: {},
      readFile: files({
        'f.yaml': `name: f\njobs:\n  - kind: search_volume\n    locations: [2840]\n    keywords_file: vol.txt\n  - kind: serp\n    locations: [2840]\n    keywords_file: gone.csv\n`,
        'vol.txt': `ok\n${long}\n`,
      }),
    }).catch((e) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const issues = (err as ConfigError).issues.map((i) => [i.file.split('/').pop(), i.line, i.field, i.rule]);
    expect(issues).toEqual([
      ['vol.txt', 2, 'jobs[0].keywords_file', 'keyword of 81 characters; at most 80'],
      ['gone.csv', 1, 'jobs[1].keywords_file', 'file not found (named by jobs[1].keywords_file in /p/f.yaml)'],
    ]);
  });

  it('refuses keywords a person cannot see or read, each with its place, and keeps joiners within words', async () => {
    const inline = await loadPipeline('/p/f.yaml', {
      env: {},
      readFile: files({
        'f.yaml': pipeline('serp', '    keywords: ["\\u200b", "a\\u0000b", "\\u202eevil", "نیم\\u200cفاصله", "👩\\u200d💻 jobs"]\n'),
      }),
    }).catch((e) => e);
    expect(inline).toBeInstanceOf(ConfigError);
    expect((inline as ConfigError).issues.map((i) => [i.file.split('/').pop(), i.line, i.field, i.rule])).toEqual([
      ['f.yaml', 5, 'jobs[0].keywords[0]', 'must not be empty (it holds only invisible characters)'],
      ['f.yaml', 5, 'jobs[0].keywords[1]', 'holds a control character (U+0000); remove it'],
      [
        'f.yaml',
        5,
        'jobs[0].keywords[2]',
        'holds a bidirectional control character (U+202E), which makes it display as another text; remove it',
      ],
    ]);
    const fromFile = await loadPipeline('/p/f.yaml', {
      env: {},
      readFile: files({ 'f.yaml': pipeline('serp', '    keywords_file: kw.txt\n'), 'kw.txt': 'fine\ntab\there\n\u2066isolated\u2069\n' }),
    }).catch((e) => e);
    expect((fromFile as ConfigError).issues.map((i) => [i.file.split('/').pop(), i.line, i.field, i.rule])).toEqual([
      ['kw.txt', 2, 'jobs[0].keywords_file', 'keyword holds a control character (U+0009); remove it'],
      [
        'kw.txt',
        3,
        'jobs[0].keywords_file',
        'keyword holds a bidirectional control character (U+2066), which makes it display as another text; remove it',
      ],
    ]);
    const ok = await loadPipeline('/p/f.yaml', {
      env: {},
      readFile: files({ 'f.yaml': pipeline('serp', '    keywords: ["نیم\\u200cفاصله", "👩\\u200d💻 jobs"]\n') }),
    });
    expect((ok.jobs[0] as { keywords: string[] }).keywords).toEqual(['نیم\u200cفاصله', '👩\u200d💻 jobs']);
  });

  it('takes a .csv column headed Keywords or Query as the keywords, not its header', () => {
    expect(parseKeywordsFile('Keywords,Volume\nrunning shoes,10\n', 'a.csv').map((k) => k.keyword)).toEqual(['running shoes']);
    expect(parseKeywordsFile('rank,query\n1,trail shoes\n', 'b.csv').map((k) => k.keyword)).toEqual(['trail shoes']);
    // A file of one column cannot tell a header by its cells: the names keyword tools export are known.
    expect(parseKeywordsFile('Search Keyword\nrunning shoes\ntrail shoes\n', 'c.csv').map((k) => k.keyword)).toEqual([
      'running shoes',
      'trail shoes',
    ]);
  });

  it("keeps hashtag keywords in a .txt: only '#' alone or followed by a space starts a comment", () => {
    const text = '# seeds for spring\n#1 running shoes\n#hashtag running\n#\n#\ttabbed note\nrunning shoes\n';
    expect(parseKeywordsFile(text, 'k.txt')).toEqual([
      { keyword: '#1 running shoes', line: 2 },
      { keyword: '#hashtag running', line: 3 },
      { keyword: 'running shoes', line: 6 },
    ]);
  });

  it('needs keywords inline or from a file', async () => {
    const err = await loadPipeline('/p/f.yaml', { env: {}, readFile: files({ 'f.yaml': pipeline('serp', '') }) }).catch((e) => e);
    expect((err as ConfigError).issues.map((i) => [i.field, i.rule])).toEqual([
      ['jobs[0].keywords', 'at least one keyword, or a keywords_file'],
    ]);
  });
});

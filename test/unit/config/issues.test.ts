import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parsePipeline } from '../../../src/config/index.js';
import { ConfigError, type ConfigIssue } from '../../../src/errors.js';

/** The issues of the one ConfigError that parsing `text` must throw. */
function issuesOf(text: string, env: Record<string, string | undefined> = {}): ConfigIssue[] {
  try {
    parsePipeline(text, 'p.yaml', env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues;
  }
  throw new Error('expected a ConfigError');
}

const KINDS =
  'serp, search_volume, keywords_for_site, keywords_for_keywords, ad_traffic, trends, labs, backlinks, on_page, ai_volume, llm_responses, embeddings, endpoint';
/** A valid job (lines 1-5) followed by `extra` lines from line 6 on. */
const job = (...extra: string[]) =>
  ['name: shoes', 'jobs:', '  - kind: serp', '    locations: [2840]', '    keywords: [running shoes]', ...extra].join('\n');

describe('parsePipeline reports each problem with file, line, column, field and rule', () => {
  it('depth above 700', () => {
    expect(issuesOf(job('    depth: 701'))).toEqual([{ file: 'p.yaml', line: 6, column: 12, field: 'jobs[0].depth', rule: 'at most 700' }]);
  });

  it('no locations: points at the job mapping', () => {
    const text = ['name: shoes', 'jobs:', '  - kind: serp', '    keywords: [running shoes]'].join('\n');
    expect(issuesOf(text)).toEqual([{ file: 'p.yaml', line: 3, column: 5, field: 'jobs[0].locations', rule: 'required' }]);
  });

  it('an empty location list', () => {
    const text = ['name: shoes', 'jobs:', '  - kind: serp', '    locations: []', '    keywords: [x]'].join('\n');
    expect(issuesOf(text)).toEqual([{ file: 'p.yaml', line: 4, column: 16, field: 'jobs[0].locations', rule: 'at least one location' }]);
  });

  it('unknown engine', () => {
    expect(issuesOf(job('    engines: [engA, engZ]'))).toEqual([
      {
        file: 'p.yaml',
        line: 6,
        column: 21,
        field: 'jobs[0].engines[1]',
        rule: "unknown engine 'engZ'; accepted: engA, engB, engC, engD, engE, engF, engG",
      },
    ]);
  });

  it('a keyword of 701 characters', () => {
    const long = 'k'.repeat(701);
    expect(issuesOf(job('    keywords:', '      - fine', `      - ${long}`).replace('    keywords: [running shoes]\n', ''))).toEqual([
      { file: 'p.yaml', line: 7, column: 9, field: 'jobs[0].keywords[1]', rule: 'at most 700 characters' },
    ]);
  });

  it('a YAML syntax error stops before the schema and reports its line', () => {
    const issues = issuesOf(['name: shoes', 'jobs:', '  - kind: serp', '    locations: [2840', '    keywords: [x]'].join('\n'));
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ file: 'p.yaml', line: 5, column: 5, field: '' });
    expect(issues[0]!.rule).toMatch(/^YAML syntax: Flow sequence/);
  });

  it('an unknown field points at its key, and names the accepted key it is closest to', () => {
    expect(issuesOf(job('    depht: 20'))).toEqual([
      { file: 'p.yaml', line: 6, column: 5, field: 'jobs[0].depht', rule: "unknown field 'depht' (did you mean 'depth'?)" },
    ]);
  });

  it('"did you mean" looks at the keys of that place: the top level, a job, each of several unknown keys', () => {
    const text = [
      'name: shoes',
      'shedule: "0 3 * * *"',
      'jobs:',
      '  - kind: serp',
      '    locations: [2840]',
      '    keywords: [a]',
      '    devics: [mobile]',
      '    zzzz: 1',
    ].join('\n');
    expect(issuesOf(text).map((i) => [i.field, i.rule])).toEqual([
      ['shedule', "unknown field 'shedule' (did you mean 'schedule'?)"],
      ['jobs[0].devics', "unknown field 'devics' (did you mean 'devices'?)"],
      // nothing close: no guess
      ['jobs[0].zzzz', "unknown field 'zzzz'"],
    ]);
  });

  it('an os that does not fit the device', () => {
    expect(issuesOf(job('    devices: [desktop, mobile]', '    os: windows'))).toEqual([
      {
        file: 'p.yaml',
        line: 7,
        column: 9,
        field: 'jobs[0].os',
        rule: "os 'windows' does not fit device 'mobile' (mobile: android or ios)",
      },
    ]);
  });

  it('a missing environment variable, without a second issue for the unexpanded text', () => {
    expect(issuesOf(job('    track_domains: ["${MY_DOMAIN}"]'))).toEqual([
      {
        file: 'p.yaml',
        line: 6,
        column: 21,
        field: 'jobs[0].track_domains[0]',
        rule: 'environment variable MY_DOMAIN is not set (referenced as ${MY_DOMAIN})',
      },
    ]);
  });

  it('a device, a priority and a mode outside what is accepted', () => {
    expect(issuesOf(job('    devices: [tablet]', '    priority: 3', '    mode: instant')).map((i) => [i.line, i.field, i.rule])).toEqual([
      [6, 'jobs[0].devices[0]', 'one of desktop, mobile'],
      [7, 'jobs[0].priority', '1 (normal) or 2 (high)'],
      [8, 'jobs[0].mode', "'standard' (tasks queued, cheaper) or 'live' (answered at once, dearer)"],
    ]);
  });

  it('an unknown job kind and a missing kind', () => {
    const text = ['name: shoes', 'jobs:', '  - kind: news', '  - locations: [1]'].join('\n');
    expect(issuesOf(text).map((i) => [i.line, i.column, i.field, i.rule])).toEqual([
      [3, 11, 'jobs[0].kind', `unknown kind 'news'; accepted: ${KINDS}`],
      [4, 5, 'jobs[1].kind', `required; one of ${KINDS}`],
    ]);
  });

  it('an unquoted reference inside a flow list gets a hint', () => {
    const [issue] = issuesOf(job('    track_domains: [${MY_DOMAIN}]'));
    expect(issue).toMatchObject({ line: 6, field: '' });
    expect(issue!.rule).toContain('quote references: "${NAME}"');
  });

  it('a duplicate key', () => {
    expect(issuesOf(job('    depth: 10', '    depth: 20'))).toEqual([
      {
        file: 'p.yaml',
        line: 7,
        column: 5,
        field: 'jobs[0].depth',
        rule: "duplicate key 'depth'; each key may appear once in a mapping",
      },
    ]);
  });

  it('two jobs with the same name', () => {
    const text = job('  - kind: serp', '    name: serp-0', '    locations: [1]', '    keywords: [x]');
    expect(issuesOf(text)).toEqual([
      { file: 'p.yaml', line: 7, column: 11, field: 'jobs[1].name', rule: "job name 'serp-0' is already used by jobs[0]" },
    ]);
  });

  it('an empty file and a top level that is not a mapping', () => {
    expect(issuesOf('# nothing yet\n')).toEqual([
      { file: 'p.yaml', line: 1, column: 1, field: '', rule: 'the file is empty; a pipeline needs at least name and jobs' },
    ]);
    expect(issuesOf('- name: shoes\n')).toEqual([
      { file: 'p.yaml', line: 1, column: 1, field: '', rule: 'the top level must be a mapping with name and jobs, not a list' },
    ]);
  });

  it('reports every problem of a file at once, in file order', () => {
    const text = readFileSync(new URL('../../fixtures/config/many-problems.yaml', import.meta.url), 'utf8');
    const issues = issuesOf(text);
    expect(issues.map((i) => [i.line, i.column, i.field])).toEqual([
      [1, 7, 'name'],
      [3, 5, 'jobs[0].locations'],
      [4, 21, 'jobs[0].engines[1]'],
      [5, 5, 'jobs[0].depht'],
      [6, 12, 'jobs[0].depth'],
      [8, 9, 'jobs[0].os'],
      [11, 9, 'jobs[0].keywords[1]'],
      [13, 11, 'jobs[1].mode'],
      [16, 21, 'jobs[1].track_domains[0]'],
    ]);
    expect(issues.every((i) => i.file === 'p.yaml')).toBe(true);
  });

  it('puts every issue in the error message, one per line', () => {
    let message = '';
    try {
      parsePipeline(job('    depth: 701', '    depht: 1'), 'pipelines/x.yaml', {});
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('(2 problems)');
    expect(message).toContain('pipelines/x.yaml:6:12  jobs[0].depth: at most 700');
    expect(message).toContain("pipelines/x.yaml:7:5  jobs[0].depht: unknown field 'depht'");
  });
});

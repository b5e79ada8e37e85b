import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { aiKeywordVolumeTaskSchema, charCount, llmResponseTaskSchema, serpTaskShape, tagField } from '../../../src/catalog/index.js';
import { loadPipeline, parsePipeline } from '../../../src/config/index.js';
import { ConfigError, type ConfigIssue } from '../../../src/errors.js';

/**
 * The spec's length rules (keyword 700, AI keyword 250, user_prompt 500, tag 255, target
 * 255, labels 64) count characters: Unicode code points. An emoji or an astral CJK
 * character is two UTF-16 code units (two to JavaScript's `.length`) but one character.
 */

const EMOJI = '\u{1F600}'; // 😀, U+1F600: two UTF-16 code units
const CJK = '\u{20000}'; // 𠀀, CJK Extension B: two UTF-16 code units

/** `n - 1` ASCII letters and one astral character: `n` characters, `n + 1` UTF-16 code units. */
const astral = (n: number, ch = EMOJI) => `${'k'.repeat(n - 1)}${ch}`;

function issuesOf(text: string): ConfigIssue[] {
  try {
    parsePipeline(text, 'p.yaml', {});
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues;
  }
  return [];
}

const serp = (kw: string) =>
  ['name: shoes', 'jobs:', '  - kind: serp', '    locations: [2840]', '    keywords:', `      - "${kw}"`].join('\n');

describe('length rules count Unicode code points, not UTF-16 code units', () => {
  it('counts an astral character as one', () => {
    expect(astral(700).length).toBe(701);
    expect(charCount(astral(700))).toBe(700);
    expect(charCount(`${EMOJI}${CJK}é`)).toBe(3);
  });

  it('a SERP keyword of 699 letters and one emoji (700 characters) passes; 701 fails with file, line, field and rule', () => {
    expect(issuesOf(serp(astral(700)))).toEqual([]);
    expect(issuesOf(serp(astral(700, CJK)))).toEqual([]);
    expect(issuesOf(serp(`${astral(700)}${EMOJI}`))).toEqual([
      { file: 'p.yaml', line: 6, column: 9, field: 'jobs[0].keywords[0]', rule: 'at most 700 characters' },
    ]);
  });

  it('AI keywords (250), prompts (500), targets (255) and labels (64) count characters too', () => {
    const job = (lines: string[]) => ['name: shoes', 'jobs:', ...lines].join('\n');
    const ai = (kw: string) => job(['  - kind: ai_volume', '    locations: [2840]', '    languages: [en]', `    keywords: ["${kw}"]`]);
    expect(issuesOf(ai(astral(250)))).toEqual([]);
    expect(issuesOf(ai(astral(251)))).toEqual([
      { file: 'p.yaml', line: 6, column: 16, field: 'jobs[0].keywords[0]', rule: 'at most 250 characters' },
    ]);
    const llm = (p: string) => job(['  - kind: llm_responses', '    models: [m1]', `    prompts: ["${p}"]`]);
    expect(issuesOf(llm(astral(500, CJK)))).toEqual([]);
    expect(issuesOf(llm(astral(501, CJK)))).toEqual([
      { file: 'p.yaml', line: 5, column: 15, field: 'jobs[0].prompts[0]', rule: 'at most 500 characters' },
    ]);
    const site = (t: string, label: string) => job(['  - kind: on_page', `    targets: ["${t}"]`, `    labels: ["${label}"]`]);
    expect(issuesOf(site(astral(255), astral(64)))).toEqual([]);
    expect(issuesOf(site(astral(256), astral(65)))).toEqual([
      { file: 'p.yaml', line: 4, column: 15, field: 'jobs[0].targets[0]', rule: 'at most 255 characters' },
      { file: 'p.yaml', line: 5, column: 14, field: 'jobs[0].labels[0]', rule: 'at most 64 characters' },
    ]);
  });

  it('the request schemas of the catalog count characters: SERP keyword, AI keywords, user_prompt, tag', () => {
    const keyword = serpTaskShape.keyword;
    expect(keyword.safeParse(astral(700)).success).toBe(true);
    expect(keyword.safeParse(astral(701)).error?.issues.map((i) => i.message)).toEqual(['at most 700 characters']);
    expect(tagField.safeParse(astral(255)).success).toBe(true);
    expect(tagField.safeParse(astral(256)).error?.issues.map((i) => i.message)).toEqual(['at most 255 characters']);
    const ai = (kw: string) => aiKeywordVolumeTaskSchema.safeParse({ keywords: [kw], location_code: 2840, language_code: 'en' });
    expect(ai(astral(250)).success).toBe(true);
    expect(ai(astral(251)).error?.issues.map((i) => i.message)).toEqual(['at most 250 characters']);
    const llm = (p: string) => llmResponseTaskSchema.safeParse({ user_prompt: p, model_name: 'm1' });
    expect(llm(astral(500)).success).toBe(true);
    expect(llm(astral(501)).error?.issues.map((i) => i.message)).toEqual(['at most 500 characters']);
  });
});

describe('a keywords file counts characters, and holds each kind to its own keyword rule', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pipeline-codepoints-'));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  async function load(kindLines: string[], keywords: string[]): Promise<ConfigIssue[]> {
    const file = join(dir, 'p.yaml');
    await writeFile(join(dir, 'kw.txt'), `${keywords.join('\n')}\n`);
    await writeFile(file, ['name: shoes', 'jobs:', ...kindLines, '    keywords_file: kw.txt'].join('\n'));
    try {
      await loadPipeline(file, { env: {} });
      return [];
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).issues;
    }
  }

  it('a 700-character line with an astral character passes; 701 fails with the file, line, field and rule', async () => {
    const serpJob = ['  - kind: serp', '    locations: [2840]'];
    expect(await load(serpJob, ['fine', astral(700, CJK)])).toEqual([]);
    expect(await load(serpJob, ['fine', `${astral(700, CJK)}${CJK}`])).toEqual([
      { file: join(dir, 'kw.txt'), line: 2, column: 1, field: 'jobs[0].keywords_file', rule: 'keyword of 701 characters; at most 700' },
    ]);
  });

  it('an ai_volume file keyword is held to 250 characters, as its keyword list is', async () => {
    const aiJob = ['  - kind: ai_volume', '    locations: [2840]', '    languages: [en]'];
    expect(await load(aiJob, [astral(250)])).toEqual([]);
    expect(await load(aiJob, [astral(251)])).toEqual([
      { file: join(dir, 'kw.txt'), line: 1, column: 1, field: 'jobs[0].keywords_file', rule: 'keyword of 251 characters; at most 250' },
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { ENDPOINTS as CLIENT_ENDPOINTS } from '../../../src/catalog/index.js';
import { ENDPOINTS, endpointById, matchEndpoint } from '../../../src/sandbox/spec/index.js';

/**
 * The emulator reads the spec on its own (src/sandbox/spec); the client reads it in
 * src/catalog. This test sets the two tables side by side: every difference must be one of
 * those listed here, each a point where the two readings of the spec disagree.
 */
const row = (e: (typeof ENDPOINTS)[number] | (typeof CLIENT_ENDPOINTS)[number]) => ({
  id: e.id,
  method: e.method,
  path: e.path,
  api: e.api,
  family: e.family,
  mode: e.mode,
  format: e.format,
  callbacks: e.callbacks,
  charged: e.charged,
  ai: e.ai,
  resultKind: e.resultKind,
  maxTasksPerPost: e.maxTasksPerPost,
});

/** Where the rows differ on purpose: the emulator reads the spec's words, the client chose otherwise. */
const KNOWN: Record<string, Partial<ReturnType<typeof row>>> = Object.fromEntries(
  CLIENT_ENDPOINTS.filter((e) => e.mode === 'utility' && e.method === 'POST' && /\/(errors|id_list)$/.test(e.path)).map((e) => [
    e.id,
    // "POST /v3/{api}/errors | array of error-query objects" (no count): the client sends 1 a POST.
    { maxTasksPerPost: undefined },
  ]),
);

describe("the emulator's endpoint table (src/sandbox/spec) against the client's catalog", () => {
  it('has the same endpoints, ids unique', () => {
    expect(new Set(ENDPOINTS.map((e) => e.id)).size).toBe(ENDPOINTS.length);
    expect(ENDPOINTS.map((e) => e.id).sort()).toEqual(CLIENT_ENDPOINTS.map((e) => e.id).sort());
  });

  it('agrees row by row, except the listed readings', () => {
    for (const c of CLIENT_ENDPOINTS) {
      expect(row(endpointById(c.id)), c.id).toEqual({ ...row(c), ...KNOWN[c.id] });
    }
  });

  it('routes the paths the spec writes, with .ai, trailing slashes, task ids and the image model', () => {
    expect(matchEndpoint('POST', '/v3/serp/engA/organic/task_post/')?.endpoint.id).toBe('serp.engA.organic.task_post');
    const get = matchEndpoint('GET', '/v3/serp/engA/organic/task_get/advanced/0b0b0b0b-0000-4000-8000-00000000000b.ai');
    expect(get).toMatchObject({
      endpoint: { id: 'serp.engA.organic.task_get.advanced' },
      ai: true,
      taskId: '0b0b0b0b-0000-4000-8000-00000000000b',
    });
    expect(matchEndpoint('POST', '/v1/chat/completions', { model: 'imgmodel-3.1-flash-image' })?.endpoint.id).toBe(
      'v1.chat.completions.image',
    );
    expect(matchEndpoint('POST', '/v1/chat/completions', { model: 'chat5.6-luna' })?.endpoint.id).toBe('v1.chat.completions');
    expect(matchEndpoint('GET', '/v3/appendix/user_data.ai')?.ai ?? false).toBe(false);
    expect(matchEndpoint('POST', '/v3/serp/engZ/organic/task_post')).toBeUndefined();
  });
});

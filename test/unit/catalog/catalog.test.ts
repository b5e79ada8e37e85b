import { describe, expect, it } from 'vitest';
import {
  aiPath,
  chatEndpointFor,
  endpoint,
  endpointPath,
  ENDPOINTS,
  FAMILIES,
  matchEndpoint,
  SERP_ORGANIC_ENGINES,
  SERP_PAIRS,
} from '../../../src/catalog/index.js';
import { idFromPath } from '../../../src/catalog/define.js';
import { APIS, ENGINE_TYPE_PAIRS, SPEC_PATHS } from './spec-paths.js';

const UUID = '01234567-89ab-4cde-8f01-23456789abcd';
const concrete = (p: string) => p.replace('{id}', UUID);

describe('the catalog covers the spec', () => {
  it('has an entry for every method and path the spec names', () => {
    const missing = SPEC_PATHS.filter(([m, p]) => !matchEndpoint(m, concrete(p)));
    expect(missing).toEqual([]);
  });

  it('expands exactly the 21 engine/type pairs and the 11 apis of the spec', () => {
    expect(SERP_PAIRS.map(([e, t]) => `${e}/${t}`)).toEqual(ENGINE_TYPE_PAIRS);
    for (const api of APIS) {
      expect(endpoint(`${api}.errors`).path).toBe(`/v3/${api}/errors`);
      expect(endpoint(`${api}.id_list`).family).toBe('id_list');
    }
    expect(SERP_ORGANIC_ENGINES).toHaveLength(7);
  });

  it('gives every entry a unique id derived from its path', () => {
    const ids = ENDPOINTS.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    const exceptions = ENDPOINTS.filter((e) => e.id !== idFromPath(e.path)).map((e) => e.id);
    expect(exceptions).toEqual(['v1.chat.completions.image']);
  });

  it('keeps the foundation ids', () => {
    expect(endpoint('serp.engA.organic.task_post').maxTasksPerPost).toBe(100);
    expect(endpoint('serp.engB.organic.task_get.advanced').path).toBe('/v3/serp/engB/organic/task_get/advanced/{id}');
    expect(endpoint('serp.engA.organic.live.regular').maxTasksPerPost).toBe(1);
    expect(endpoint('keywords_data.engA_ads.search_volume.live').resultKind).toBe('search_volume');
    expect(endpoint('appendix.user_data').method).toBe('GET');
    expect(endpoint('v1.chat.completions').family).toBe('chat');
    expect(() => endpoint('serp.engZ.organic.task_post')).toThrow(/unknown endpoint id/);
  });

  it('shapes bodies by method and version, with a schema for every body', () => {
    for (const e of ENDPOINTS) {
      if (e.method === 'GET') expect(e.body, e.id).toBe('none');
      else {
        expect(e.body, e.id).toBe(e.path.startsWith('/v1/') ? 'object' : 'tasks');
        expect(e.request, e.id).toBeDefined();
      }
      if (e.path.includes('{id}')) expect(e.method, e.id).toBe('GET');
    }
  });
});

describe('rate-limit families follow the Limits table', () => {
  const fam = (id: string) => FAMILIES[endpoint(id).family].perMinute;
  it.each([
    ['v1.chat.completions', 60],
    ['v1.embeddings', 120],
    ['serp.engA.organic.task_post', 60],
    ['serp.engG.video_comments.live.advanced', 60],
    ['keywords_data.engA_ads.search_volume.task_post', 60],
    ['domain_analytics.technologies.aggregation_technologies.live', 60],
    ['backlinks.referring_domains.live', 30],
    ['on_page.resources', 30],
    ['merchant.engA.products.task_post', 120],
    ['ai_optimization.chat_llm.llm_responses.live', 120],
    ['appendix.status', 10],
    ['serp.id_list', 10],
    ['merchant.id_list', 10],
    ['serp.engA.news.tasks_fixed', 20],
    ['serp.engA.events.task_post', 2000],
  ])('%s: %i per minute', (id, perMinute) => {
    expect(fam(id)).toBe(perMinute);
  });
});

describe('free and charged calls', () => {
  it('marks every call the spec lists as free', () => {
    const free = [
      'on_page.lighthouse.versions',
      'keywords_data.endpoints',
      'serp.endpoints',
      'appendix.status',
      'appendix.user_data',
      'appendix.webhook_resend',
      'serp.errors',
      'business_data.id_list',
      'serp.engA.maps.tasks_fixed',
      'on_page.resources',
      'serp.engA.organic.task_get.html',
      'serp.engA.organic.tasks_ready',
    ];
    for (const id of free) expect(endpoint(id).charged, id).toBe(false);
  });

  it('charges every live call and task creation, and nothing else of those modes is free', () => {
    for (const e of ENDPOINTS.filter((x) => x.mode === 'task_post' || (x.mode === 'live' && x.id !== 'on_page.resources'))) {
      expect(e.charged, e.id).toBe(true);
    }
  });

  it('takes callbacks only on task creation, up to 100 tasks per POST', () => {
    for (const e of ENDPOINTS) {
      expect(e.callbacks, e.id).toBe(e.mode === 'task_post');
      if (e.mode === 'task_post') expect(e.maxTasksPerPost, e.id).toBe(100);
    }
    expect(endpoint('appendix.webhook_resend').maxTasksPerPost).toBe(100);
  });

  it('states the keywords per task the planner packs by', () => {
    const withMax = ENDPOINTS.filter((e) => e.maxKeywordsPerTask !== undefined).map((e) => [e.id, e.maxKeywordsPerTask]);
    expect(withMax).toContainEqual(['keywords_data.engA_ads.search_volume.task_post', 700]);
    expect(withMax).toContainEqual(['keywords_data.engA_ads.search_volume.live', 700]);
    expect(withMax).toContainEqual(['ai_optimization.ai_keyword_data.keywords_search_volume.live', 1000]);
    expect(withMax).toContainEqual(['keywords_data.svc_trends.explore.live', 5]);
    // Only endpoints whose bodies carry keywords, and never on a read.
    for (const e of ENDPOINTS.filter((x) => x.maxKeywordsPerTask !== undefined)) expect(e.method, e.id).toBe('POST');
    // search volume task_post and live for engA_ads and engA, AI volume, four trends.
    expect(withMax).toHaveLength(2 + 2 + 1 + 4);
  });
});

describe('paths', () => {
  it('fills and encodes placeholders', () => {
    expect(endpointPath(endpoint('serp.engA.organic.task_get.regular'), 'a/b')).toBe('/v3/serp/engA/organic/task_get/regular/a%2Fb');
    expect(endpointPath(endpoint('serp.engA.locations.country_code'), { country_code: 'us' })).toBe('/v3/serp/engA/locations/us');
    expect(() => endpointPath(endpoint('serp.engA.organic.task_get.regular'))).toThrow(/task id/);
  });

  it('matches `.ai` variants of live, task creation, task_get and locations, and nothing else', () => {
    const live = matchEndpoint('POST', '/v3/svc_labs/engA/ranked_keywords/live.ai');
    expect(live?.endpoint.id).toBe('svc_labs.engA.ranked_keywords.live');
    expect(live?.ai).toBe(true);
    expect(matchEndpoint('POST', '/v3/serp/engA/organic/task_post.ai')?.ai).toBe(true);
    const get = matchEndpoint('GET', `/v3/serp/engA/organic/task_get/advanced/${UUID}.ai`);
    expect(get).toMatchObject({ ai: true, taskId: UUID });
    expect(matchEndpoint('GET', '/v3/serp/engA/locations.ai')?.ai).toBe(true);
    expect(matchEndpoint('GET', '/v3/serp/engA/locations/us.ai')?.params).toEqual({ country_code: 'us' });
    expect(matchEndpoint('GET', '/v3/appendix/user_data.ai')).toBeUndefined();
    expect(matchEndpoint('POST', '/v1/embeddings.ai')).toBeUndefined();
    expect(aiPath(endpoint('keywords_data.svc_trends.explore.live'))).toBe('/v3/keywords_data/svc_trends/explore/live.ai');
  });

  it('tells image generation from text chat by the model in the body', () => {
    expect(matchEndpoint('POST', '/v1/chat/completions', { model: 'imgmodel-3.1-flash-image' })?.endpoint.id).toBe(
      'v1.chat.completions.image',
    );
    expect(matchEndpoint('POST', '/v1/chat/completions', { model: 'chat5.6-luna' })?.endpoint.id).toBe('v1.chat.completions');
    expect(matchEndpoint('POST', '/v1/chat/completions')?.endpoint.id).toBe('v1.chat.completions');
    expect(chatEndpointFor('imgmodel-3.1-flash-image').resultKind).toBe('image_generation');
  });

  it('refuses a path of the right shape with the wrong method', () => {
    expect(matchEndpoint('GET', '/v3/serp/engA/organic/task_post')).toBeUndefined();
    expect(matchEndpoint('POST', `/v3/serp/engA/organic/task_get/advanced/${UUID}`)).toBeUndefined();
  });
});

import { define } from './define.js';
import type { Endpoint } from './endpoint.js';
import { aiKeywordVolumeTaskSchema } from './schemas/keyword-tasks.js';
import { llmResponseTaskSchema } from './schemas/llm-response-task.js';
import { onPageReadTaskSchema, onPageResourcesTaskSchema, onPageTaskSchema } from './schemas/on-page-tasks.js';
import { chatBodySchema, embeddingsBodySchema, imageBodySchema } from './schemas/v1-bodies.js';
import { z } from 'zod';
import { tagField } from './schemas/common.js';

/** `/v1`: chat (text), chat (image generation, same path, told apart by model), embeddings. */
export const V1_ENDPOINTS: readonly Endpoint[] = [
  define({ path: '/v1/chat/completions', mode: 'live', request: chatBodySchema, resultKind: 'chat_completion' }),
  define({
    id: 'v1.chat.completions.image',
    path: '/v1/chat/completions',
    mode: 'live',
    request: imageBodySchema,
    resultKind: 'image_generation',
  }),
  define({ path: '/v1/embeddings', mode: 'live', request: embeddingsBodySchema, resultKind: 'embeddings' }),
];

/** AI optimization: keyword search volume in AI tools, LLM responses, their lists. */
export const AI_OPTIMIZATION_ENDPOINTS: readonly Endpoint[] = [
  define({
    path: '/v3/ai_optimization/ai_keyword_data/available_filters',
    mode: 'utility',
    method: 'GET',
    resultKind: 'available_filters',
  }),
  define({
    path: '/v3/ai_optimization/ai_keyword_data/keywords_search_volume/live',
    mode: 'live',
    request: aiKeywordVolumeTaskSchema,
    resultKind: 'ai_keyword_volume',
    maxKeywordsPerTask: 1000,
  }),
  define({ path: '/v3/ai_optimization/ai_keyword_data/locations_and_languages', mode: 'utility', method: 'GET', resultKind: 'locations' }),
  define({
    path: '/v3/ai_optimization/chat_llm/llm_responses/live',
    mode: 'live',
    request: llmResponseTaskSchema,
    resultKind: 'llm_response',
  }),
  define({
    path: '/v3/ai_optimization/chat_llm/llm_responses/models',
    mode: 'utility',
    method: 'GET',
    resultKind: 'llm_models',
    inferred: 'method not shown; GET like the other lists',
  }),
];

/** On-page: crawl task creation, the resource, page and link reads, lighthouse. */
export const ON_PAGE_ENDPOINTS: readonly Endpoint[] = [
  define({ path: '/v3/on_page/task_post', mode: 'task_post', request: onPageTaskSchema, resultKind: 'on_page_task' }),
  define({
    path: '/v3/on_page/resources',
    mode: 'live',
    charged: false,
    request: onPageResourcesTaskSchema,
    resultKind: 'on_page_resources',
  }),
  define({
    path: '/v3/on_page/pages',
    mode: 'live',
    request: onPageReadTaskSchema,
    resultKind: 'on_page_pages',
    inferred: 'price not shown; taken as charged so a lost answer is never re-sent blindly',
  }),
  define({
    path: '/v3/on_page/links',
    mode: 'live',
    request: onPageReadTaskSchema,
    resultKind: 'on_page_links',
    inferred: 'price not shown; taken as charged so a lost answer is never re-sent blindly',
  }),
  define({ path: '/v3/on_page/lighthouse/versions', mode: 'utility', method: 'GET', resultKind: 'lighthouse_versions' }),
  define({
    path: '/v3/on_page/lighthouse/live/json',
    mode: 'live',
    request: z.object({ url: z.string().url('an absolute URL'), version: z.string().min(1).optional(), tag: tagField }).passthrough(),
    resultKind: 'lighthouse',
    inferred: 'the spec names only "the on_page/lighthouse POST" with an optional version; path and url field assumed',
  }),
];

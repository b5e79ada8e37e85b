import { createRng } from '../prng.js';
import { serviceDate, type ResultInput } from './result-input.js';

/** The LLM models the emulator offers: a base name, its versions (latest last) and whether it reasons. */
export const LLM_MODELS = [
  { model_name: 'llm-alpha', versions: ['llm-alpha-2025-06-01', 'llm-alpha-2026-01-15'], reasoning: false, web_search: true },
  { model_name: 'llm-alpha-o3', versions: ['llm-alpha-o3-2025-12-01'], reasoning: true, web_search: true },
  { model_name: 'llm-beta', versions: ['llm-beta-2.0', 'llm-beta-2.5'], reasoning: false, web_search: false },
  { model_name: 'llm-beta-thinking', versions: ['llm-beta-thinking-2.5'], reasoning: true, web_search: false },
  // Names that say nothing true about reasoning: only the list's own flag tells (issue 16, point 9).
  { model_name: 'llm-delta', versions: ['llm-delta-1.0'], reasoning: true, web_search: false },
  { model_name: 'llm-o1-lite', versions: ['llm-o1-lite-1.0'], reasoning: false, web_search: true },
] as const;

/** The model a name selects: a base name gives its latest version; a version names itself. */
export function resolveLlmModel(name: string): { base: (typeof LLM_MODELS)[number]; version: string } | undefined {
  for (const m of LLM_MODELS) {
    if (m.model_name === name) return { base: m, version: m.versions[m.versions.length - 1]! };
    if ((m.versions as readonly string[]).includes(name)) return { base: m, version: name };
  }
  return undefined;
}

/**
 * The request rules spec/limits.ts cannot check without the model list: the model must
 * exist, reasoning models take no `temperature` and at least 1024 output tokens (LLM
 * response table: "minimum 1024 for reasoning models"; "not supported by reasoning
 * models"). Undefined when valid.
 */
export function checkLlmTask(params: Record<string, unknown>): string | undefined {
  const name = typeof params.model_name === 'string' ? params.model_name : '';
  const model = resolveLlmModel(name);
  if (!model) return `'model_name' ${name} is not one of ${LLM_MODELS.map((m) => m.model_name).join(', ')} (see llm_responses/models)`;
  if (model.base.reasoning && params.temperature !== undefined)
    return `'temperature' is not supported by the reasoning model ${model.base.model_name}`;
  if (model.base.reasoning && typeof params.max_output_tokens === 'number' && params.max_output_tokens < 1024)
    return `'max_output_tokens' must be at least 1024 for the reasoning model ${model.base.model_name}`;
  if (params.web_search === true && !model.base.web_search) return `'web_search' is not supported by ${model.base.model_name}`;
  return undefined;
}

/** `llm_responses/live`: a short deterministic answer, token counts (reasoning and web search may pass `max_output_tokens`) and the defaults applied. */
export function llmResponseResults(input: ResultInput): unknown[] {
  const prompt = String(input.params.user_prompt ?? '');
  const model = resolveLlmModel(String(input.params.model_name ?? ''))!;
  const r = createRng(input.seed, 'llm', model.version, prompt);
  const maxOut = typeof input.params.max_output_tokens === 'number' ? input.params.max_output_tokens : 2048;
  const text = `Simulated answer of ${model.base.model_name} to: "${prompt.slice(0, 120)}". ${r.pick(['It depends on your goals.', 'Here are three options to consider.', 'The short answer is yes.'])}`;
  // The limit caps the answer itself. Spec: "output may exceed the limit when web_search
  // is true or a reasoning model is used" — the reasoning and the search summary come on
  // top of it, uncapped, so a tight limit is passed now and then.
  const webSearch = input.params.web_search === true;
  const reasoningTokens = model.base.reasoning ? r.int(200, 1600) : 0;
  const searchTokens = webSearch ? r.int(20, 240) : 0;
  const outputTokens = Math.min(maxOut, Math.ceil(text.length / 4)) + reasoningTokens + searchTokens;
  return [
    {
      model_name: model.version,
      input_tokens: Math.ceil(prompt.length / 4),
      output_tokens: outputTokens,
      web_search: webSearch,
      temperature: model.base.reasoning ? null : (input.params.temperature ?? (input.params.top_p === undefined ? 0.94 : null)),
      top_p: model.base.reasoning ? null : (input.params.top_p ?? (input.params.temperature === undefined ? 0.92 : null)),
      max_output_tokens: maxOut,
      datetime: serviceDate(input.at),
      items: [
        {
          type: 'message',
          sections: [
            { type: 'text', text, annotations: webSearch ? [{ title: 'Example source', url: 'https://en.wikipedia.org/' }] : null },
          ],
        },
      ],
    },
  ];
}

/** `llm_responses/models`: the model list. */
export function llmModelsResult(): unknown[] {
  return LLM_MODELS.map((m) => ({
    model_name: m.model_name,
    latest_version: m.versions[m.versions.length - 1],
    versions: [...m.versions],
    reasoning: m.reasoning,
    web_search_supported: m.web_search,
  }));
}

/** `ai_keyword_data/available_filters`: fields usable in filters of the AI keyword data endpoints. */
export function aiAvailableFiltersResult(): unknown[] {
  return [
    {
      keywords_search_volume: {
        keyword: 'str',
        ai_search_volume: 'num',
        'ai_monthly_searches.ai_search_volume': 'num',
        location_code: 'num',
        language_code: 'str',
      },
    },
  ];
}

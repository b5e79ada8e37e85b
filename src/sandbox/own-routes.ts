import type { RouteHandler } from './handlers/context.js';
import { handleErrors } from './utilities/errors-endpoint.js';
import { handleIdList } from './utilities/id-list.js';
import {
  handleApiStatus,
  handleEndpointList,
  handleLanguages,
  handleLighthouseVersions,
  handleCountryLocations,
  handleLocations,
  handleLocationsAndLanguages,
  handleStatusCodes,
} from './utilities/reference-data.js';
import { handleTasksFixed } from './utilities/tasks-fixed.js';
import { handleUserData } from './utilities/user-data.js';
import { UTILITY_APIS, utilityReply } from './utilities/utility-reply.js';
import { aiAvailableFiltersResult, llmModelsResult } from './data/llm-results.js';
import { handleWebhookResend } from './utilities/webhook-resend.js';

/** A path the emulator serves by itself, outside the endpoint table's task endpoints. */
export interface OwnRoute {
  method: 'GET' | 'POST';
  pattern: RegExp;
  handler: RouteHandler;
  /** Whether `{path}.ai` is served too. */
  ai?: boolean;
}

const API = `(${UTILITY_APIS.join('|')})`;
const ENGINE = '(eng[A-G])';

/** The `/v1` endpoints and the utilities, in match order (trailing slashes are removed before matching). */
export const OWN_ROUTES: OwnRoute[] = [
  { method: 'GET', pattern: /^\/v3\/appendix\/status$/, handler: handleApiStatus },
  { method: 'GET', pattern: /^\/v3\/appendix\/user_data$/, handler: handleUserData },
  { method: 'GET', pattern: /^\/v3\/appendix\/errors$/, handler: handleStatusCodes },
  { method: 'POST', pattern: /^\/v3\/appendix\/webhook_resend$/, handler: handleWebhookResend },
  { method: 'POST', pattern: new RegExp(`^/v3/${API}/errors$`), handler: handleErrors },
  { method: 'POST', pattern: new RegExp(`^/v3/${API}/id_list$`), handler: handleIdList },
  { method: 'GET', pattern: /^\/v3\/(serp|keywords_data)\/endpoints$/, handler: handleEndpointList },
  { method: 'GET', pattern: new RegExp(`^/v3/serp/${ENGINE}/([a-z_]+)/tasks_fixed$`), handler: handleTasksFixed },
  { method: 'GET', pattern: new RegExp(`^/v3/serp/${ENGINE}(?:/events)?/locations$`), handler: handleLocations, ai: true },
  { method: 'GET', pattern: new RegExp(`^/v3/serp/${ENGINE}/locations/([a-zA-Z]{2})$`), handler: handleCountryLocations, ai: true },
  {
    method: 'GET',
    pattern: /^\/v3\/ai_optimization\/ai_keyword_data\/available_filters$/,
    handler: (ctx) => utilityReply(ctx, 'available_filters', aiAvailableFiltersResult()),
  },
  {
    method: 'GET',
    pattern: /^\/v3\/ai_optimization\/chat_llm\/llm_responses\/models$/,
    handler: (ctx) => utilityReply(ctx, 'models', llmModelsResult()),
  },
  { method: 'GET', pattern: new RegExp(`^/v3/serp/${ENGINE}/languages$`), handler: handleLanguages },
  {
    method: 'GET',
    pattern: /^\/v3\/(svc_labs|ai_optimization\/ai_keyword_data)\/locations_and_languages$/,
    handler: handleLocationsAndLanguages,
  },
  { method: 'GET', pattern: /^\/v3\/on_page\/lighthouse\/versions$/, handler: handleLighthouseVersions },
];

import { define } from './define.js';
import type { Endpoint } from './endpoint.js';
import { UTILITY_APIS } from './serp-pairs.js';
import {
  errorsQuerySchema,
  errorsQueryTimeRules,
  idListQuerySchema,
  idListQueryTimeRules,
  webhookResendTaskSchema,
} from './schemas/utility-tasks.js';

/** Account and recovery utilities: appendix, `{api}/errors` and `{api}/id_list` for the 11 apis. All free. */
export const UTILITY_ENDPOINTS: readonly Endpoint[] = [
  define({ path: '/v3/appendix/status', mode: 'utility', method: 'GET', resultKind: 'api_status' }),
  define({ path: '/v3/appendix/user_data', mode: 'utility', method: 'GET', resultKind: 'user_data' }),
  define({
    path: '/v3/appendix/webhook_resend',
    mode: 'utility',
    method: 'POST',
    maxTasksPerPost: 100,
    request: webhookResendTaskSchema,
    resultKind: 'webhook_resend',
  }),
  define({
    path: '/v3/appendix/errors',
    mode: 'utility',
    method: 'GET',
    resultKind: 'generic',
    inferred: 'the errors appendix (status codes and messages); method not shown, GET like the other lists',
  }),
  ...UTILITY_APIS.flatMap((api) => [
    define({
      path: `/v3/${api}/errors`,
      mode: 'utility',
      method: 'POST',
      request: errorsQuerySchema,
      timeRules: errorsQueryTimeRules,
      resultKind: 'errors',
    }),
    define({
      path: `/v3/${api}/id_list`,
      mode: 'utility',
      method: 'POST',
      request: idListQuerySchema,
      timeRules: idListQueryTimeRules,
      resultKind: 'id_list',
    }),
  ]),
];

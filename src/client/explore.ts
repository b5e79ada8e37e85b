import { matchEndpoint, migrateV2, type Endpoint } from '../catalog/index.js';
import { EtlError } from '../errors.js';
import type { Lander, RawResponse } from './attempt.js';
import type { ChargeRecord } from './charge.js';
import { ServiceClient, type ClientOptions } from './client.js';

export interface ExploreRequest {
  method: string;
  /** A `/v3` or `/v1` path (trailing slash, `.ai` and task ids allowed), or a `/v2` path with a v3 twin. */
  path: string;
  /** The parsed JSON body of a POST. */
  data?: unknown;
}

export interface ExploreResult {
  endpoint: Endpoint;
  httpStatus: number;
  charge: ChargeRecord;
  /** The body exactly as the service sent it. */
  body: string;
  /** The call's error when the spec's success rule failed; the body is still returned. */
  error?: EtlError;
  warnings: string[];
}

/**
 * One call by method and path, for exploring the service by hand (`pipeline api`): the
 * path is found in the catalog (a v2 path is translated with a warning), the body checked
 * against its schema before sending, and the raw answer returned even when it is a failure.
 * `land`, when given, receives every answer first, as a run's landing does.
 */
export async function exploreCall(opts: Omit<ClientOptions, 'land'> & { land?: Lander }, req: ExploreRequest): Promise<ExploreResult> {
  const method = req.method.toUpperCase();
  const warnings: string[] = [];
  let path = req.path.startsWith('/') ? req.path : `/${req.path}`;
  path = path.split('?')[0]!;
  if (path.startsWith('/v2/')) {
    const m = migrateV2(path);
    warnings.push(m.warning);
    path = m.paths[0]!;
  }
  const match = matchEndpoint(method, path, req.data);
  if (!match) {
    throw new EtlError(
      'ETL_REQUEST_INVALID',
      `${method} ${path} is not an endpoint of the catalog; \`pipeline endpoints\` lists them (check the method too).`,
      { context: { stage: 'client', path } },
    );
  }
  const ep = match.endpoint;
  let last: RawResponse | undefined;
  // Every answer is landed where the caller lands (`pipeline api`: raw/ and the ledger) before it is kept here.
  const land: Lander = async (raw) => {
    await opts.land?.(raw);
    last = raw;
  };
  const client = new ServiceClient({ ...opts, land, onWarning: (w) => warnings.push(w) });
  if (method === 'POST' && req.data === undefined) {
    throw new EtlError('ETL_REQUEST_INVALID', `${method} ${path} takes a body: pass --data '[{...}]' or --data @file.json.`, {
      context: { stage: 'client', path },
    });
  }
  let error: EtlError | undefined;
  try {
    if (ep.body === 'object') await client.callV1(ep, req.data);
    else {
      const tasks = req.data === undefined ? undefined : Array.isArray(req.data) ? req.data : [req.data];
      await client.call(ep, { ai: match.ai, params: match.params, ...(tasks ? { tasks } : {}) });
    }
  } catch (err) {
    if (!(err instanceof EtlError) || !last) throw err;
    error = err;
  }
  if (!last) throw new Error('no response was landed');
  const got: RawResponse = last;
  return { endpoint: ep, httpStatus: got.httpStatus, charge: got.charge, body: got.body, warnings, ...(error ? { error } : {}) };
}

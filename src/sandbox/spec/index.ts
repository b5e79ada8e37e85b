/**
 * The emulator's reading of the service interface, in one place: the endpoint table
 * (endpoints.ts), request limits and rate families (limits.ts), prices (prices.ts), the rule
 * checker (rules.ts). The silent points are in ../readings.ts.
 */
export type { Endpoint, EndpointMode, FamilyId, ResultFormat, ResultKind } from './endpoint.js';
export { ENDPOINTS, endpointById, endpointPath, matchEndpoint, SERP_PAIRS, UTILITY_APIS, type EndpointMatch } from './endpoints.js';
export * from './limits.js';
export * from './prices.js';
export { charCount, checkRequest, decodeKeyword, parseSpecDateTime, type RequestRules, type RuleCheck } from './rules.js';

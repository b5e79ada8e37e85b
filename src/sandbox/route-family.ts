import { familyOfPath, type Endpoint, type FamilyId } from './spec/index.js';

/**
 * The rate-limit family of a call: the endpoint table's row when the path is one, otherwise
 * the Limits table read for the path (spec/limits.ts `familyOfPath`).
 */
export function routeFamily(path: string, endpoint?: Endpoint): FamilyId {
  return endpoint ? endpoint.family : familyOfPath(path.replace(/\.ai$/, ''));
}

import { familyOf, type Endpoint, type FamilyId } from '../catalog/index.js';

/**
 * The rate-limit family of a call: the catalog's entry when the path is one, otherwise
 * the catalog's reading of the Limits table for the path (`familyOf`).
 */
export function routeFamily(path: string, endpoint?: Endpoint): FamilyId {
  return endpoint ? endpoint.family : familyOf(path.replace(/\.ai$/, ''));
}

export * from './build-report.js';
export * from './payload.js';
export * from './pca.js';
export { chartLibrary, renderHtml } from './render-html.js';
export { normaliseDomain } from './tracked-domains.js';

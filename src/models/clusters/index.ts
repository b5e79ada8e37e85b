export * from './adjusted-rand-index.js';
export * from './choose-clusters.js';
export * from './cluster-keywords.js';
export * from './embedding-cache.js';
export * from './similarity-matrix.js';
export * from './silhouette.js';
export * from './spherical-kmeans.js';
export * from './vectors.js';

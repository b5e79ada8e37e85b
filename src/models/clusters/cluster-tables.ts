/** One column of a table the clustering step writes: its SQL type and what it holds. */
export interface ClusterColumn {
  name: string;
  type: string;
  notNull?: boolean;
  description: string;
}

/** A table the clustering step writes (not a SQL model): its grain and columns, read by its DDL and by docs/schema.md. */
export interface ClusterTable {
  name: string;
  grain: string;
  description: string;
  columns: readonly ClusterColumn[];
  /** Published for BI tools; `partitionBy` the column whose UTC day names its Parquet partition. */
  publish?: { partitionBy?: string };
}

export const KEYWORD_CLUSTERS: ClusterTable = {
  name: 'keyword_clusters',
  publish: {},
  grain: 'one row per keyword of the last clustering',
  description:
    'Rebuilt whole by each clustering (`pipeline models cluster`, or a run with `clusters:`): every collected keyword with the cluster it was put in. Published.',
  columns: [
    { name: 'keyword', type: 'VARCHAR', notNull: true, description: 'The keyword, lower-cased as the planner stores it.' },
    { name: 'cluster_id', type: 'INTEGER', notNull: true, description: 'Its cluster, 1 the largest; joins `keyword_cluster_summary`.' },
    {
      name: 'similarity_to_centroid',
      type: 'DOUBLE',
      description: "Cosine similarity (-1 to 1) of the keyword's embedding to its cluster's centroid.",
    },
    { name: 'distance_to_centroid', type: 'DOUBLE', description: '1 - similarity_to_centroid (0 at the centroid).' },
    { name: 'is_representative', type: 'BOOLEAN', description: "The keyword closest to its cluster's centroid (one per cluster)." },
    { name: 'embedding_model', type: 'VARCHAR', description: 'The `/v1/embeddings` model the vectors came from.' },
    { name: 'dimensions', type: 'INTEGER', description: 'Length of the vectors clustered.' },
  ],
};

export const KEYWORD_CLUSTER_SUMMARY: ClusterTable = {
  name: 'keyword_cluster_summary',
  publish: {},
  grain: 'one row per cluster of the last clustering',
  description: "Rebuilt with `keyword_clusters`: each cluster's size, volume and label. Published.",
  columns: [
    { name: 'cluster_id', type: 'INTEGER', notNull: true, description: 'The cluster, 1 the largest.' },
    { name: 'representative_keyword', type: 'VARCHAR', description: "The member closest to the cluster's centroid." },
    { name: 'size', type: 'INTEGER', description: 'Keywords in the cluster.' },
    {
      name: 'total_volume',
      type: 'BIGINT',
      description:
        'Searches a month: over the members and each location, the largest `search_volume` collected; null when no volumes were collected.',
    },
    {
      name: 'label',
      type: 'VARCHAR',
      description: 'A short name asked of a chat model once per new set of members; null when labels are off.',
    },
    { name: 'mean_similarity', type: 'DOUBLE', description: 'Mean cosine similarity of the members to the centroid (-1 to 1).' },
    {
      name: 'silhouette',
      type: 'DOUBLE',
      description: 'Silhouette score (-1 to 1) of the whole clustering that chose the number of clusters; the same on every row.',
    },
    { name: 'embedding_model', type: 'VARCHAR', description: 'The `/v1/embeddings` model the vectors came from.' },
    { name: 'dimensions', type: 'INTEGER', description: 'Length of the vectors clustered.' },
  ],
};

export const KEYWORD_EMBEDDINGS: ClusterTable = {
  name: 'keyword_embeddings',
  publish: { partitionBy: 'embedded_at' },
  grain: 'one row per keyword, model and dimensions',
  description:
    'The embeddings cache: a keyword is embedded (and paid for) once per model and dimensions, and kept. Published, partitioned by the UTC day of `embedded_at`.',
  columns: [
    { name: 'keyword', type: 'VARCHAR', notNull: true, description: 'The text embedded.' },
    { name: 'model', type: 'VARCHAR', notNull: true, description: 'The `/v1/embeddings` model.' },
    { name: 'dimensions', type: 'INTEGER', notNull: true, description: 'Length of the vector asked for.' },
    { name: 'embedding', type: 'FLOAT[]', notNull: true, description: 'The vector, as the service returned it.' },
    { name: 'embedded_at', type: 'TIMESTAMP WITH TIME ZONE', description: 'When the answer was stored (UTC).' },
  ],
};

export const KEYWORD_CLUSTER_LABELS: ClusterTable = {
  name: 'keyword_cluster_labels',
  grain: 'one row per label model and set of members',
  description: 'The labels cache: a cluster whose members were labelled before is not asked again. Not published.',
  columns: [
    { name: 'label_model', type: 'VARCHAR', notNull: true, description: 'The chat model asked.' },
    { name: 'member_hash', type: 'VARCHAR', notNull: true, description: "SHA-256 (hex) of the cluster's sorted members, one a line." },
    { name: 'label', type: 'VARCHAR', description: "The model's answer." },
    { name: 'labelled_at', type: 'TIMESTAMP WITH TIME ZONE', description: 'When the answer was stored (UTC).' },
  ],
};

/** The tables of the clustering step, in the order docs/schema.md lists them. */
export const CLUSTER_TABLES: readonly ClusterTable[] = [
  KEYWORD_CLUSTERS,
  KEYWORD_CLUSTER_SUMMARY,
  KEYWORD_EMBEDDINGS,
  KEYWORD_CLUSTER_LABELS,
];

/** `create [or replace] table` for a declared table: its DDL comes from the same declaration as its docs. */
export function createTableSql(t: ClusterTable, mode: 'replace' | 'if not exists'): string {
  const cols = t.columns.map((c) => `${c.name} ${c.type.toLowerCase()}${c.notNull ? ' not null' : ''}`).join(', ');
  return mode === 'replace' ? `create or replace table ${t.name} (${cols})` : `create table if not exists ${t.name} (${cols})`;
}

/** The section of docs/schema.md for the clustering step's tables. */
export function clusterTablesMarkdown(): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  return [
    '## Keyword clusters',
    '',
    'Written by the clustering step (`pipeline models cluster`, or a run with `clusters:`) from',
    '`/v1/embeddings` answers, not by a SQL model; declared in `src/models/clusters/cluster-tables.ts`.',
    '',
    ...CLUSTER_TABLES.flatMap((t) => [
      `### \`${t.name}\``,
      '',
      `${t.grain}. ${cell(t.description)}`,
      '',
      '| column | type | description |',
      '|---|---|---|',
      ...t.columns.map((c) => `| \`${c.name}\` | ${c.type}${c.notNull ? ' not null' : ''} | ${cell(c.description)} |`),
      '',
    ]),
  ].join('\n');
}

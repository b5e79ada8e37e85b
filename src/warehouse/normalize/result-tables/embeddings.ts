import { c, callIdKey, indexKey, type KindSpec } from './define.js';

/** `/v1/embeddings`: one row per call (usage) and one per input text's vector. */
export const embeddingsKind: KindSpec = {
  kind: 'embeddings',
  reads: [{ resultKind: 'embeddings' }],
  match: /^\/v1\/embeddings$/,
  tables: [
    {
      name: 'embedding_calls',
      grain: 'one row per embeddings call',
      rows: '',
      replaceKey: 'call_id',
      columns: [callIdKey, c('model', 'varchar'), c('object', 'varchar'), c('prompt_tokens', 'bigint', 'usage.prompt_tokens'), c('total_tokens', 'bigint', 'usage.total_tokens')],
    },
    {
      name: 'embeddings',
      grain: 'one row per input of an embeddings call (its vector)',
      rows: 'data[]',
      replaceKey: 'call_id',
      columns: [
        callIdKey,
        indexKey('data_index', 'data[]'),
        c('model', 'varchar', '$.model'),
        c('input_index', 'int', 'index', 'position of the text in the request input'),
        c('embedding', 'double[]', undefined, 'the vector (a base64 answer lands in embedding__v)'),
      ],
    },
  ],
};

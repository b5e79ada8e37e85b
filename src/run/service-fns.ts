import type { ServiceClient } from '../client/index.js';
import type { EmbedFn, LabelFn } from '../models/index.js';

/**
 * Embeds texts with `/v1/embeddings` (one call per batch; each call lands in the ledger). A batch
 * whose answer was landed already (a process killed before its vectors were stored) is read back
 * from the raw landing, not bought again (`reuseLanded`).
 */
export function serviceEmbed(client: ServiceClient, model: string, dimensions: number): EmbedFn {
  const threeModel = model.startsWith('text-embedding-3-');
  return async (texts) =>
    (await client.embed({ model, input: [...texts], ...(threeModel ? { dimensions } : {}) }, { reuseLanded: true })).vectors;
}

/**
 * Names a cluster with one `chat5.6-luna` call: a short label from its keywords. The
 * answer is trimmed to one line of at most 60 characters. The same question answered before
 * (landed, its label not kept: a process killed in between) is read back from the raw
 * landing, not bought again (`reuseLanded`).
 */
export function serviceLabel(client: ServiceClient, model = 'chat5.6-luna'): LabelFn {
  return async (keywords) => {
    const res = await client.chat(
      {
        model,
        messages: [
          { role: 'system', content: 'You name groups of search keywords. Answer with a label of two to five words, nothing else.' },
          { role: 'user', content: keywords.slice(0, 30).join('\n') },
        ],
      },
      { reuseLanded: true },
    );
    const text = String(res.body.choices[0]?.message.content ?? '')
      .split('\n')[0]!
      .trim();
    return text.slice(0, 60) || keywords[0] || 'cluster';
  };
}

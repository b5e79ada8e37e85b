import { randomBytes } from 'node:crypto';
import { ServiceClient } from '../client/index.js';
import { clusterKeywords, type ClusterKeywordsResult } from '../models/index.js';
import { landedAnswer, RawLanding, withWarehouse } from '../warehouse/index.js';
import { serviceEmbed, serviceLabel } from './service-fns.js';

export interface ClusterRunOptions {
  warehouseDir: string;
  baseUrl: string;
  apiKey: string;
  model?: string;
  dimensions?: number;
  keywords?: readonly string[];
  now?: () => Date;
}

/**
 * Embeds every collected keyword not yet embedded (cached by model, dimensions and text),
 * clusters them and labels new clusters with `chat5.6-luna`. Every call is landed raw and
 * gets its ledger row under a run id of its own (`cluster-...`, pipeline `(models)`).
 */
export async function runClusters(o: ClusterRunOptions): Promise<ClusterKeywordsResult & { runId: string }> {
  const now = o.now ?? (() => new Date());
  const runId = `cluster-${now()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}`;
  return withWarehouse(o.warehouseDir, async (wh) => {
    const landing = new RawLanding(wh, { runId, pipeline: '(models)' });
    const client = new ServiceClient({
      baseUrl: o.baseUrl,
      apiKey: o.apiKey,
      land: landing.land,
      sending: landing.sending,
      notSent: landing.notSent,
      landedAnswer: (hash, path) => landedAnswer(wh, hash, path),
      now,
    });
    const model = o.model ?? 'text-embedding-3-small';
    const dimensions = o.dimensions ?? 256;
    const r = await clusterKeywords(wh, {
      model,
      dimensions,
      embed: serviceEmbed(client, model, dimensions),
      label: serviceLabel(client),
      keywords: o.keywords,
      now,
    });
    return { ...r, runId };
  });
}

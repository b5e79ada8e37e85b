import { createHash } from 'node:crypto';
import { clusterKeywords, runModels } from '../../src/models/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';

export interface SyntheticShape {
  keywords: number;
  /** Nightly checks, ending the day before `end`. */
  days: number;
  /** Domains ranked per page. */
  depth: number;
  /** Months of search volume. */
  months: number;
  locations: readonly number[];
  dimensions: number;
  /** Day after the last check, `yyyy-mm-dd`. */
  end?: string;
}

const TOPICS = [
  'running shoes',
  'hiking boots',
  'camping tent',
  'rain jacket',
  'trekking poles',
  'ski boots',
  'yoga mat',
  'bike helmet',
  'swim goggles',
  'climbing rope',
  'fishing rod',
  'golf clubs',
];
const FIRST = ['best', 'cheap', 'lightweight', 'waterproof', 'womens', 'mens', 'kids', 'budget', 'premium', 'wide', 'vegan', 'used'];
const LAST = ['review', 'sale', 'near me', 'for beginners', 'uk', '2026', 'deals', 'comparison', 'brands', 'outlet', 'size guide', 'vs'];

/** The synthetic pipeline's tracked domain, ranked on half of the keywords. */
export const SYNTHETIC_TRACKED = 'ourshop.com';
export const SYNTHETIC_PIPELINE = 'synthetic';

/** Keyword `k` of the synthetic set: "<first> <topic> <last>", unique for k < 1,728. */
export function syntheticKeyword(k: number): string {
  return `${FIRST[Math.floor(k / 12) % 12]} ${TOPICS[k % 12]} ${LAST[Math.floor(k / 144) % 12]}`;
}

/**
 * A warehouse with the report's model tables filled straight from SQL, shaped like a
 * busy account: `keywords` keywords checked nightly for `days` days in each location
 * (`depth` domains a page from a pool of 3,000, positions shuffled weekly, `ourshop.com`
 * on half the keywords), visibility from those ranks, seasonal monthly volumes, daily
 * spend, and a keyword map of twelve topics. The models (and the cluster tables, by the
 * real clustering code on a few keywords) are first built empty, so every table has its
 * real columns; building them from raw pages at this size takes minutes, which a size
 * check does not need.
 */
export async function writeSyntheticWarehouse(dir: string, shape: SyntheticShape): Promise<void> {
  const built = await runModels({ warehouseDir: dir });
  const failed = built.builds.find((b) => b.status === 'failed');
  if (failed) throw new Error(`synthetic warehouse: model ${failed.name} failed: ${failed.message}`);
  const end = shape.end ?? '2026-11-01';
  const start = `(date '${end}' - ${shape.days}::integer)`;
  const locs = `(select unnest([${shape.locations.join(', ')}]) as loc)`;
  const keywords = Array.from({ length: shape.keywords }, (_, k) => syntheticKeyword(k));
  const depth = Math.max(1, Math.floor(shape.depth));
  await withWarehouse(dir, async (wh) => {
    await wh.run('create temp table synthetic_keywords (k integer, keyword varchar)');
    await wh.run(`insert into synthetic_keywords select unnest(range(${shape.keywords})), unnest(from_json(?::json, '["VARCHAR"]'))`, [
      JSON.stringify(keywords),
    ]);
    await wh.run(`insert into rank_history (keyword, location_code, language_code, device, engine, domain, check_date, rank_absolute, rank_group, item_type, is_new, is_lost, first_seen_date, task_id, result_index)
      select keyword, loc, 'en', 'desktop', 'engA', dom, day, p + 1, p + 1, 'organic', false, false, day, 'serp-' || d, 0
      from (
        select d, ${start} + d::integer as day, loc, k, keyword, p,
               -- plain arithmetic, not hash(): hash() made this insert six times slower
               case when k % 2 = 0 and p = (k * 31 + loc + (d // 5) * 17) % ${depth} then '${SYNTHETIC_TRACKED}'
                    else 'site' || ((k * 7919 + ((p + k * 13 + loc + (d // 7) * 7) % ${depth}) * 104729 + loc) % 3000) || '.com' end as dom,
        from range(${shape.days}) dd(d), ${locs}, synthetic_keywords, range(${depth}) pp(p)
      )`);
    await wh.run(`insert into tasks (tag, run_id, pipeline, job, endpoint_id, task_id, state)
      select 'serp-' || d, 'run-' || d, '${SYNTHETIC_PIPELINE}', 'serp-0', 'serp.engA.organic.task_post', 'serp-' || d, 'collected' from range(${shape.days}) dd(d)`);
    await wh.run(`insert into domain_visibility_daily
      with checked as (select ${shape.keywords} as n, (select max(ctr) from ctr_weights) as top),
      per_domain as (
        select check_date, location_code, language_code, device, engine, domain,
               count(*) as keywords_ranked, count(*) filter (where rank_absolute <= 10) as keywords_top10, sum(coalesce(w.ctr, 0)) as visibility,
        from rank_history left join ctr_weights as w on w.position = rank_absolute
        group by all
      )
      select check_date, location_code, language_code, device, engine, domain, domain = '${SYNTHETIC_TRACKED}', (select n from checked), keywords_ranked, keywords_top10, visibility,
             visibility / ((select n from checked) * (select top from checked)),
             visibility / ((select n from checked) * (select top from checked)),
             visibility / nullif(sum(visibility) over (partition by check_date, location_code), 0),
      from per_domain`);
    await wh.run(`insert into search_volume (task_id, result_index, keyword, location_code, language_code, search_volume)
      select 'sv-' || loc, k, keyword, loc, 'en', 100 + hash(k) % 50000 from ${locs}, synthetic_keywords`);
    await wh.run(`insert into tasks (tag, run_id, pipeline, job, endpoint_id, task_id, state)
      select 'sv-' || loc, 'run-0', '${SYNTHETIC_PIPELINE}', 'volumes', 'keywords_data.engA_ads.search_volume.task_post', 'sv-' || loc, 'collected' from ${locs}`);
    await wh.run(`insert into search_volume_trends (keyword, location_code, month_start, search_volume, mom_change, mom_pct, yoy_change, yoy_pct, yoy_change_ratio, avg_3m, slope_12m, seasonality_index, peak_month)
      select keyword, loc, ms, v, null, null, null, ((hash(k, loc) % 41)::int - 20) / 100, ((hash(k, loc) % 41)::int - 20) / 100, null, ((hash(k) % 201)::int - 100)::double, 1 + 0.4 * cos(2 * pi() * (month(ms) - 1 - k % 12) / 12), k % 12 + 1
      from (
        select keyword, k, loc, ms, ((100 + hash(k) % 50000) * (1 + 0.4 * cos(2 * pi() * (month(ms) - 1 - k % 12) / 12)))::bigint as v,
        from ${locs}, synthetic_keywords, range(${shape.months}) mm(m),
             lateral (select (date_trunc('month', date '${end}') - to_months(${shape.months} - m))::date as ms)
      )`);
    await wh.run(`insert into spend_daily (call_date, pipeline, endpoint_id, run_id, calls, charged_calls, calls_without_charge, charge_cny, cost_usd)
      select ${start} + d::integer, '${SYNTHETIC_PIPELINE}', endpoint, 'run-' || d, calls, calls, 0, charge, charge / 7.2
      from range(${shape.days}) dd(d),
           (values ('serp.engA.organic.task_post', ${Math.ceil((shape.keywords * shape.locations.length) / 100)}, ${(shape.keywords * shape.locations.length * 0.0006).toFixed(4)}),
                   ('keywords_data.engA_ads.search_volume.task_post', 1, 0.072),
                   ('serp.engA.organic.task_get.advanced', ${shape.keywords * shape.locations.length}, 0)) ee(endpoint, calls, charge)`);
    // The real clustering code on a few keywords creates the cluster tables with their real
    // columns; the rows for every keyword are then written from SQL (clustering 1,000
    // keywords, row by row, takes longer than the size check deserves).
    await clusterKeywords(wh, {
      model: 'synthetic-topics',
      dimensions: shape.dimensions,
      keywords: keywords.slice(0, TOPICS.length * 2),
      embed: async (texts) => texts.map((t) => topicEmbedding(t, shape.dimensions)),
      label: (members) => TOPICS.find((t) => members[0]!.includes(t)) ?? members[0]!,
      maxK: TOPICS.length + 1,
    });
    await wh.run('delete from keyword_embeddings');
    await wh.run('delete from keyword_clusters');
    await wh.run('delete from keyword_cluster_summary');
    await wh.run(`insert into keyword_embeddings (keyword, model, dimensions, embedding, embedded_at)
      select keyword, 'synthetic-topics', ${shape.dimensions},
             list_transform(range(${shape.dimensions}), i -> ((hash(k, i) % 1000)::int / 1000.0 - 0.5 + case when i % ${TOPICS.length} = k % ${TOPICS.length} then 2 else 0 end))::float[],
             now()
      from synthetic_keywords`);
    await wh.run(`insert into keyword_clusters
      select keyword, k % ${TOPICS.length} + 1, 0.9, 0.1, k < ${TOPICS.length}, 'synthetic-topics', ${shape.dimensions} from synthetic_keywords`);
    await wh.run(
      `insert into keyword_cluster_summary
      select k % ${TOPICS.length} + 1, min(keyword), count(*), null, any_value(t.topic), 0.9, 0.5, 'synthetic-topics', ${shape.dimensions}
      from synthetic_keywords, (select unnest(from_json(?::json, '["VARCHAR"]')) as topic, unnest(range(${TOPICS.length})) as i) as t
      where t.i = k % ${TOPICS.length}
      group by k % ${TOPICS.length}`,
      [JSON.stringify(TOPICS)],
    );
  });
}

/** A deterministic embedding: the keyword's topic direction plus some per-keyword noise. */
function topicEmbedding(text: string, dims: number): Float32Array {
  const topic = TOPICS.findIndex((t) => text.includes(t));
  const v = new Float32Array(dims);
  let block = createHash('sha256').update(text).digest();
  for (let i = 0; i < dims; i++) {
    if (i % 16 === 0 && i > 0) block = createHash('sha256').update(block).digest();
    v[i] = ((block.readUInt16BE((i % 16) * 2) / 65535) * 2 - 1) * 0.5 + (i % TOPICS.length === topic ? 2 : 0);
  }
  return v;
}

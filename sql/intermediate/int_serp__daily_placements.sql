-- Each domain on each day's check of a series (int_serp__daily_checks: one check per series
-- and day), with its best absolute rank and the click weight (seed ctr_weights) of its
-- results: what domain_visibility_daily and share_of_serp_daily sum per market and day.
-- Paid results are not ranks; items without a domain or an absolute rank cannot place (as in
-- int_serp__domain_placements). best_rank_ctr: the weight of the best rank alone (a domain's
-- visibility); results_top10 and ctr_top10: every result of the domain at positions 1-10 (its
-- share of the first page). Weights are exact decimals, so sums over them do not depend on
-- the order rows arrive in (an incremental build and a full one give the same bits).
with

daily_checks as (
    select * from int_serp__daily_checks
),

items as (
    select * from stg_serp__items
),

ctr_weights as (
    select * from ctr_weights
),

placed_items as (
    select
        i.task_id,
        i.result_index,
        i.check_date,
        i.domain,
        i.rank_absolute,
        w.ctr,
    from items as i
    left join ctr_weights as w
        on w.position = i.rank_absolute
    where i.domain is not null
      and i.domain <> ''
      and i.rank_absolute is not null
      and i.item_type <> 'paid'
),

per_check as (
    select
        task_id,
        result_index,
        check_date,
        domain,
        min(rank_absolute) as best_rank,
        count(*) filter (where rank_absolute <= 10) as results_top10,
        coalesce(sum(ctr) filter (where rank_absolute <= 10), 0)::decimal(18, 9) as ctr_top10,
    from placed_items
    group by all
),

daily_placements as (
    select
        c.check_date,
        c.location_code,
        c.language_code,
        c.device,
        c.engine,
        c.keyword,
        c.task_id,
        c.result_index,
        p.domain,
        p.best_rank,
        coalesce(w.ctr, 0)::decimal(18, 9) as best_rank_ctr,
        p.results_top10,
        p.ctr_top10,
    from daily_checks as c
    inner join per_check as p
        on p.task_id = c.task_id
        and p.result_index = c.result_index
        and p.check_date = c.check_date
    left join ctr_weights as w
        on w.position = p.best_rank
)

select * from daily_placements

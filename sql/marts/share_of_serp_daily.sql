-- Share of SERP per tracked domain and day: the part of the first page's click weight that a
-- tracked domain's results hold, over the keywords it is tracked on, your own domain and its
-- competitors (up to 10 track_domains a job) side by side on the same checks.
-- Honest about depth: a check that bought 30 results says nothing of rank 31-100, and adaptive
-- depth buys 10 on most nights. So the share is computed over the top 10, which every check
-- of depth 10 or more covers, and the deep figure (ranked within 100) only over the checks
-- that bought 100 or more; a check shallower than 10 (depth 1-9) counts in neither.
-- share_of_serp = sum of ctr(rank_absolute) over every item of the domain at positions 1-10
-- of the covered checks / (covered checks x the sum of ctr over positions 1-10), weights from
-- the ctr_weights seed; all domains' shares of a page add up to at most 1 (paid results and
-- items without a domain hold the rest). A row per tracked domain, series' market and day,
-- even when the domain placed nowhere (zeros), so a day off the first page is a 0, not a gap.
-- Each day stands alone: the incremental build recomputes days from the last built one on; a
-- change of the tracked domains rebuilds it in full (full_refresh_on in the sidecar).
with

daily_checks as (
    select * from int_serp__daily_checks
    {% if is_incremental %}
    where check_date >= {{ incremental_since }}
    {% endif %}
),

tracked_domains as (
    select * from int_serp__tracked_domains
),

daily_placements as (
    select * from int_serp__daily_placements
    {% if is_incremental %}
    where check_date >= {{ incremental_since }}
    {% endif %}
),

ctr_weights as (
    select * from ctr_weights
),

first_page_weight as (
    -- the click weight of positions 1-10: what one check's first page holds in all
    select sum(ctr)::decimal(18, 9) as ctr_top10,
    from ctr_weights
    where position <= 10
),

tracked_checks as (
    -- each check of a series, once per domain tracked on that series
    select
        c.task_id,
        c.result_index,
        c.check_date,
        c.location_code,
        c.language_code,
        c.device,
        c.engine,
        t.domain,
        coalesce(c.depth >= 10, false) as covers_top10,
        coalesce(c.depth >= 100, false) as covers_top100,
    from daily_checks as c
    inner join tracked_domains as t
        on t.keyword = c.keyword
        and t.location_code = c.location_code
        and t.language_code = c.language_code
        and t.device = c.device
        and t.engine = c.engine
),

per_check as (
    -- the tracked domains' places on the checked pages (paid results aside)
    select *
    from daily_placements
    where domain in (select distinct domain from tracked_domains)
),

checked as (
    select
        t.*,
        p.best_rank,
        coalesce(p.results_top10, 0) as results_top10,
        coalesce(p.ctr_top10, 0)::decimal(18, 9) as ctr_top10,
    from tracked_checks as t
    left join per_check as p
        on p.task_id = t.task_id
        and p.result_index = t.result_index
        and p.domain = t.domain
),

per_domain as (
    select
        check_date,
        location_code,
        language_code,
        device,
        engine,
        domain,
        count(*) as keywords_checked,
        count(*) filter (where covers_top10) as keywords_covered_top10,
        count(*) filter (where covers_top10 and best_rank <= 10) as keywords_top10,
        coalesce(sum(results_top10) filter (where covers_top10), 0)::bigint as results_top10,
        coalesce(sum(ctr_top10) filter (where covers_top10), 0)::decimal(18, 9) as visibility_exact,
        count(*) filter (where covers_top100) as keywords_covered_top100,
        count(*) filter (where covers_top100 and best_rank <= 100) as keywords_top100,
    from checked
    group by all
),

final as (
    select
        d.check_date,
        d.location_code,
        d.language_code,
        d.device,
        d.engine,
        d.domain,
        d.keywords_checked,
        d.keywords_covered_top10,
        d.keywords_top10,
        d.results_top10,
        d.visibility_exact::double as visibility_top10,
        (d.visibility_exact / nullif(d.keywords_covered_top10 * f.ctr_top10, 0))::double as share_of_serp,
        (d.keywords_top10 / nullif(d.keywords_covered_top10, 0))::double as keyword_share_top10,
        (d.visibility_exact / nullif(sum(d.visibility_exact) over market, 0))::double as share_among_tracked,
        d.keywords_covered_top100,
        d.keywords_top100,
        (d.keywords_top100 / nullif(d.keywords_covered_top100, 0))::double as keyword_share_top100,
    from per_domain as d
    cross join first_page_weight as f
    window market as (partition by d.check_date, d.location_code, d.language_code, d.device, d.engine)
)

select * from final
order by check_date

-- Rank history: every domain on every checked page, per check date, with its best
-- absolute and group rank, the ranking URL and item type (is_organic: an organic result;
-- features and types never seen before are non-organic placements), the change since the series'
-- previous successful check, new and lost flags, and first and last seen dates.
-- A domain that ranked on the previous check and is absent from this one gets a "lost"
-- row with null ranks; a failed or missing check has no row at all (never rank 0 or 101).
-- last_seen_date is the check itself for a ranked row and the previous check for a lost
-- one; first_seen_date is the first check the domain ranked on for this series.
-- checked_depth (and previous_checked_depth): the depth the check asked for, so a domain
-- absent from a shallow check reads "beyond N", never as a drop to 0; days_since_previous_check:
-- the gap to the series' previous successful check (a failed night makes it longer than one).
-- is_tracked: the domain is in the track_domains of a job that checks this series
-- (int_serp__tracked_domains); every other domain on the page is a competitor.
-- How: the checks of each series are numbered (check_seq); one window over each series and
-- domain in check order gives the previous and next check the domain ranked on. That is
-- one sort of the placements (which spills to disk) where self-joins of the whole history
-- with itself outgrew the warehouse's 4 GB memory limit at 1,000 keywords x 365 nights.
-- Incremental: only checks from the last built date on are rebuilt, numbered with each
-- series' last check before them (not the whole history); the previous check's
-- ranks are read back from this table, and the first-seen dates before that from
-- int_serp__first_seen (a row per series and domain, not per check: reading them from this
-- table scanned its whole history every night). A change of
-- the tracked domains rebuilds the table in full (full_refresh_on in the sidecar).
with

{% if is_incremental %}
last_built_checks as (
    -- each series' last check before the rebuilt ones: the context the first rebuilt check is compared with
    select keyword, location_code, language_code, device, engine, max(check_date) as check_date,
    from int_serp__daily_checks
    where check_date < {{ incremental_since }}
    group by all
),
{% endif %}

daily_checks as (
    -- incremental: the rebuilt checks and each series' last one before them, not the whole
    -- history (the checks are numbered below; only consecutive numbers matter).
    -- in_slice: the model is built in passes (slices in its sidecar), each over the series of
    -- some keywords; every window and join below stays within a series, so a pass needs no
    -- other's rows, and holds a quarter of the night's placements instead of all of them
    select d.* from int_serp__daily_checks as d
    where {{ in_slice(d.keyword) }}
    {% if is_incremental %}
    and d.check_date >= {{ incremental_since }}
    union all by name
    select d.* from int_serp__daily_checks as d
    semi join last_built_checks as l
        using (keyword, location_code, language_code, device, engine, check_date)
    where {{ in_slice(d.keyword) }}
    {% endif %}
),

tracked_domains as (
    select * from int_serp__tracked_domains
),

domain_placements as (
    select * from int_serp__domain_placements
    {% if is_incremental %}
    where check_date >= {{ incremental_since }}
    {% endif %}
),

tracked_by_series as (
    select
        keyword,
        location_code,
        language_code,
        device,
        engine,
        list(domain) as tracked_domains,
    from tracked_domains
    group by all
),

checks as (
    -- series_id: a compact key of the series; check_seq: the check's number in its series;
    -- tracked_domains: the series' few tracked domains, looked up per row below (a join of
    -- every row with int_serp__tracked_domains was planned with the year of rows as its
    -- hash table)
    select
        d.*,
        (dense_rank() over (order by d.keyword, d.location_code, d.language_code, d.device, d.engine))::integer as series_id,
        (row_number() over series)::integer as check_seq,
        lag(d.check_date) over series as previous_check_date,
        lead(d.check_date) over series as next_check_date,
        lag(d.depth) over series as previous_depth,
        coalesce(t.tracked_domains, []) as tracked_domains,
    from daily_checks as d
    left join tracked_by_series as t
        on t.keyword = d.keyword
        and t.location_code = d.location_code
        and t.language_code = d.language_code
        and t.device = d.device
        and t.engine = d.engine
    window series as (
        partition by d.keyword, d.location_code, d.language_code, d.device, d.engine
        order by d.check_date
    )
),

placements as (
    select
        c.series_id,
        c.check_seq,
        c.check_date,
        p.domain,
        p.rank_absolute,
        p.rank_group,
        p.url,
        p.item_type,
        p.is_organic,
        p.items_on_page,
        null::date as prior_first_seen_date,
        false as is_context,
    from domain_placements as p
    inner join checks as c
        on c.task_id = p.task_id
        and c.result_index = p.result_index
    {% if is_incremental %}
    where c.check_date >= {{ incremental_since }}
    union all
    -- the last built check before the rebuilt ones, read back: the first rebuilt check's
    -- changes and lost domains are against it
    select
        c.series_id,
        c.check_seq,
        c.check_date,
        h.domain,
        h.rank_absolute,
        null::integer as rank_group,
        null::varchar as url,
        null::varchar as item_type,
        null::boolean as is_organic,
        null::integer as items_on_page,
        h.first_seen_date as prior_first_seen_date,
        true as is_context,
    from {{ this }} as h
    inner join checks as c
        on c.task_id = h.task_id
        and c.result_index = h.result_index
        and c.check_date = h.check_date
    where h.check_date < {{ incremental_since }}
      and c.next_check_date >= {{ incremental_since }}
      and not h.is_lost
    {% endif %}
),

sequenced as (
    select
        *,
        lag(check_seq) over series_domain as previous_ranked_seq,
        lag(rank_absolute) over series_domain as previous_ranked_rank,
        lead(check_seq) over series_domain as next_ranked_seq,
        min(least(prior_first_seen_date, check_date)) over (
            series_domain rows between unbounded preceding and unbounded following
        ) as first_seen_in_scope,
    from placements
    window series_domain as (partition by series_id, domain order by check_seq)
),

combined as (
    -- a ranked row for each placement rebuilt; a lost row on the next check of the series
    -- for a domain absent from it (dropped below when there is no next check)
    select
        s.series_id,
        s.check_seq + g.is_lost::integer as check_seq,
        s.domain,
        case when not g.is_lost then s.rank_absolute end as rank_absolute,
        case when not g.is_lost then s.rank_group end as rank_group,
        case when not g.is_lost then s.url end as url,
        case when not g.is_lost then s.item_type end as item_type,
        case when not g.is_lost then s.is_organic end as is_organic,
        case when g.is_lost then 0 else s.items_on_page end as items_on_page,
        case
            when g.is_lost then s.rank_absolute
            when s.previous_ranked_seq = s.check_seq - 1 then s.previous_ranked_rank
        end as previous_rank_absolute,
        not g.is_lost and s.previous_ranked_seq is distinct from s.check_seq - 1 as is_new,
        g.is_lost,
        s.first_seen_in_scope,
    from sequenced as s
    cross join (values (false), (true)) as g(is_lost)
    where (not g.is_lost and not s.is_context)
       or (g.is_lost and s.next_ranked_seq is distinct from s.check_seq + 1)
),

located as (
    select
        c.keyword,
        c.location_code,
        c.language_code,
        c.device,
        c.engine,
        r.domain,
        list_contains(c.tracked_domains, r.domain) as is_tracked,
        c.check_date,
        c.previous_check_date,
        date_diff('day', c.previous_check_date, c.check_date)::integer as days_since_previous_check,
        c.depth as checked_depth,
        c.previous_depth as previous_checked_depth,
        r.rank_absolute,
        r.rank_group,
        r.url,
        r.item_type,
        r.is_organic,
        r.items_on_page,
        r.previous_rank_absolute,
        r.previous_rank_absolute - r.rank_absolute as rank_change,
        r.is_new,
        r.is_lost,
        r.first_seen_in_scope,
        c.task_id,
        c.result_index,
    from combined as r
    inner join checks as c
        on c.series_id = r.series_id
        and c.check_seq = r.check_seq
),

{% if is_incremental %}
returning_domains as (
    -- new on this check but perhaps seen long before: their first-seen date is looked up
    select distinct keyword, location_code, language_code, device, engine, domain,
    from located
    where is_new
),

prior_seen as (
    -- a few rows per series (int_serp__first_seen), not the table's whole history
    select
        f.keyword, f.location_code, f.language_code, f.device, f.engine, f.domain,
        f.first_seen_date,
    from int_serp__first_seen as f
    semi join returning_domains as r
        on r.keyword = f.keyword
        and r.location_code = f.location_code
        and r.language_code = f.language_code
        and r.device = f.device
        and r.engine = f.engine
        and r.domain = f.domain
    where f.first_seen_date < {{ incremental_since }}
),
{% endif %}

final as (
    select
        s.keyword,
        s.location_code,
        s.language_code,
        s.device,
        s.engine,
        s.domain,
        s.is_tracked,
        s.check_date,
        s.previous_check_date,
        s.days_since_previous_check,
        s.checked_depth,
        s.previous_checked_depth,
        s.rank_absolute,
        s.rank_group,
        s.url,
        s.item_type,
        s.is_organic,
        s.items_on_page,
        s.previous_rank_absolute,
        s.rank_change,
        s.is_new,
        s.is_lost,
        {% if is_incremental %}
        least(p.first_seen_date, s.first_seen_in_scope) as first_seen_date,
        {% else %}
        s.first_seen_in_scope as first_seen_date,
        {% endif %}
        case when s.is_lost then s.previous_check_date else s.check_date end as last_seen_date,
        s.task_id,
        s.result_index,
    from located as s
    {% if is_incremental %}
    left join prior_seen as p
        on p.keyword = s.keyword
        and p.location_code = s.location_code
        and p.language_code = s.language_code
        and p.device = s.device
        and p.engine = s.engine
        and p.domain = s.domain
    {% endif %}
)

select * from final
order by check_date

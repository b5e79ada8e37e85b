-- Rank history: every domain on every checked page, per check date, with its best
-- absolute and group rank, the ranking URL and item type, the change since the series'
-- previous successful check, new and lost flags, and first and last seen dates.
-- A domain that ranked on the previous check and is absent from this one gets a "lost"
-- row with null ranks; a failed or missing check has no row at all (never rank 0 or 101).
-- last_seen_date is the check itself for a ranked row and the previous check for a lost
-- one; first_seen_date is the first check the domain ranked on for this series.
-- is_tracked: the domain is in the track_domains of a job that checks this series
-- (int_serp__tracked_domains); every other domain on the page is a competitor.
-- Incremental: only checks from the last built date on are rebuilt; the previous check's
-- ranks and the first-seen dates before that are read back from this table. A change of
-- the tracked domains rebuilds the table in full (full_refresh_on in the sidecar).
with

daily_checks as (
    select * from int_serp__daily_checks
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

checks as (
    select
        *,
        lag(check_date) over series as previous_check_date,
        lag(task_id) over series as previous_task_id,
        lag(result_index) over series as previous_result_index,
    from daily_checks
    window series as (
        partition by keyword, location_code, language_code, device, engine
        order by check_date
    )
),

scoped_checks as (
    select * from checks
    {% if is_incremental %}
    where check_date >= {{ incremental_since }}
    {% endif %}
),

placements as (
    select
        c.keyword,
        c.location_code,
        c.language_code,
        c.device,
        c.engine,
        c.check_date,
        c.task_id,
        c.result_index,
        c.previous_check_date,
        c.previous_task_id,
        c.previous_result_index,
        p.domain,
        p.rank_absolute,
        p.rank_group,
        p.url,
        p.item_type,
        p.items_on_page,
    from scoped_checks as c
    inner join domain_placements as p
        on p.task_id = c.task_id
        and p.result_index = c.result_index
),

previous_placements as (
    select task_id, result_index, domain, rank_absolute, first_seen_date,
    from (
        select task_id, result_index, domain, rank_absolute, null::date as first_seen_date,
        from placements
        {% if is_incremental %}
        union all
        select h.task_id, h.result_index, h.domain, h.rank_absolute, h.first_seen_date,
        from {{ this }} as h
        semi join scoped_checks as c
            on c.previous_task_id = h.task_id
            and c.previous_result_index = h.result_index
        where h.check_date < {{ incremental_since }}
          and not h.is_lost
        {% endif %}
    )
),

ranked as (
    select
        cur.* exclude (previous_task_id, previous_result_index),
        prev.rank_absolute as previous_rank_absolute,
        prev.rank_absolute - cur.rank_absolute as rank_change,
        prev.domain is null as is_new,
        false as is_lost,
        prev.first_seen_date as prior_first_seen_date,
    from placements as cur
    left join previous_placements as prev
        on prev.task_id = cur.previous_task_id
        and prev.result_index = cur.previous_result_index
        and prev.domain = cur.domain
),

lost as (
    select
        c.keyword,
        c.location_code,
        c.language_code,
        c.device,
        c.engine,
        c.check_date,
        c.task_id,
        c.result_index,
        c.previous_check_date,
        prev.domain,
        null::integer as rank_absolute,
        null::integer as rank_group,
        null::varchar as url,
        null::varchar as item_type,
        0 as items_on_page,
        prev.rank_absolute as previous_rank_absolute,
        null::integer as rank_change,
        false as is_new,
        true as is_lost,
        prev.first_seen_date as prior_first_seen_date,
    from scoped_checks as c
    inner join previous_placements as prev
        on prev.task_id = c.previous_task_id
        and prev.result_index = c.previous_result_index
    anti join placements as cur
        on cur.task_id = c.task_id
        and cur.result_index = c.result_index
        and cur.domain = prev.domain
),

combined as (
    select * from ranked
    union all by name
    select * from lost
),

{% if is_incremental %}
returning_domains as (
    -- new on this check but perhaps seen long before: their first-seen date is looked up
    select distinct keyword, location_code, language_code, device, engine, domain,
    from combined
    where is_new
),

prior_seen as (
    select
        h.keyword, h.location_code, h.language_code, h.device, h.engine, h.domain,
        min(h.first_seen_date) as first_seen_date,
    from {{ this }} as h
    semi join returning_domains as r
        on r.keyword = h.keyword
        and r.location_code = h.location_code
        and r.language_code = h.language_code
        and r.device = h.device
        and r.engine = h.engine
        and r.domain = h.domain
    where h.check_date < {{ incremental_since }}
      and h.is_new
    group by all
),
{% endif %}

seen as (
    select
        c.*,
        least(
            {% if is_incremental %}
            s.first_seen_date,
            {% endif %}
            min(least(c.prior_first_seen_date, case when not c.is_lost then c.check_date end)) over series_domain
        ) as first_seen_date,
        case when c.is_lost then c.previous_check_date else c.check_date end as last_seen_date,
    from combined as c
    {% if is_incremental %}
    left join prior_seen as s
        on s.keyword = c.keyword
        and s.location_code = c.location_code
        and s.language_code = c.language_code
        and s.device = c.device
        and s.engine = c.engine
        and s.domain = c.domain
    {% endif %}
    window series_domain as (partition by c.keyword, c.location_code, c.language_code, c.device, c.engine, c.domain)
),

final as (
    select
        s.keyword,
        s.location_code,
        s.language_code,
        s.device,
        s.engine,
        s.domain,
        t.domain is not null as is_tracked,
        s.check_date,
        s.previous_check_date,
        s.rank_absolute,
        s.rank_group,
        s.url,
        s.item_type,
        s.items_on_page,
        s.previous_rank_absolute,
        s.rank_change,
        s.is_new,
        s.is_lost,
        s.first_seen_date,
        s.last_seen_date,
        s.task_id,
        s.result_index,
    from seen as s
    left join tracked_domains as t
        on t.keyword = s.keyword
        and t.location_code = s.location_code
        and t.language_code = s.language_code
        and t.device = s.device
        and t.engine = s.engine
        and t.domain = s.domain
)

select * from final
order by check_date

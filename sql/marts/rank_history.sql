-- Rank history: every domain on every checked page, per check date, with its best
-- absolute and group rank, the ranking URL and item type, the change since the series'
-- previous successful check, new and lost flags, and first and last seen dates.
-- A domain that ranked on the previous check and is absent from this one gets a "lost"
-- row with null ranks; a failed or missing check has no row at all (never rank 0 or 101).
-- Incremental: only checks from the last built date on are rebuilt; the state before
-- that date (previous ranks, first seen) is read back from this table.
with

daily_checks as (
    select * from int_serp__daily_checks
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
        lag(check_date) over (
            partition by keyword, location_code, language_code, device, engine
            order by check_date
        ) as previous_check_date,
    from daily_checks
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
        c.previous_check_date,
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
    select keyword, location_code, language_code, device, engine, check_date, domain, rank_absolute, rank_group,
    from placements
    {% if is_incremental %}
    union all
    select h.keyword, h.location_code, h.language_code, h.device, h.engine, h.check_date, h.domain, h.rank_absolute, h.rank_group,
    from {{ this }} as h
    semi join (
        select distinct keyword, location_code, language_code, device, engine, previous_check_date,
        from scoped_checks
        where previous_check_date < {{ incremental_since }}
    ) as pc
        on pc.keyword = h.keyword
        and pc.location_code = h.location_code
        and pc.language_code = h.language_code
        and pc.device = h.device
        and pc.engine = h.engine
        and pc.previous_check_date = h.check_date
    where h.check_date < {{ incremental_since }}
      and not h.is_lost
    {% endif %}
),

ranked as (
    select
        cur.*,
        prev.rank_absolute as previous_rank_absolute,
        prev.rank_absolute - cur.rank_absolute as rank_change,
        prev.domain is null as is_new,
        false as is_lost,
    from placements as cur
    left join previous_placements as prev
        on prev.keyword = cur.keyword
        and prev.location_code = cur.location_code
        and prev.language_code = cur.language_code
        and prev.device = cur.device
        and prev.engine = cur.engine
        and prev.check_date = cur.previous_check_date
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
    from scoped_checks as c
    inner join previous_placements as prev
        on prev.keyword = c.keyword
        and prev.location_code = c.location_code
        and prev.language_code = c.language_code
        and prev.device = c.device
        and prev.engine = c.engine
        and prev.check_date = c.previous_check_date
    anti join placements as cur
        on cur.keyword = c.keyword
        and cur.location_code = c.location_code
        and cur.language_code = c.language_code
        and cur.device = c.device
        and cur.engine = c.engine
        and cur.check_date = c.check_date
        and cur.domain = prev.domain
),

combined as (
    select * from ranked
    union all by name
    select * from lost
),

{% if is_incremental %}
prior_seen as (
    select
        h.keyword, h.location_code, h.language_code, h.device, h.engine, h.domain,
        min(h.first_seen_date) as first_seen_date,
        max(h.last_seen_date) as last_seen_date,
    from {{ this }} as h
    semi join (select distinct keyword, location_code, language_code, device, engine, domain, from combined) as k
        on k.keyword = h.keyword
        and k.location_code = h.location_code
        and k.language_code = h.language_code
        and k.device = h.device
        and k.engine = h.engine
        and k.domain = h.domain
    where h.check_date < {{ incremental_since }}
    group by all
),
{% endif %}

seen as (
    select
        c.*,
        {% if is_incremental %}
        coalesce(s.first_seen_date, min(case when not c.is_lost then c.check_date end) over running) as first_seen_date,
        coalesce(max(case when not c.is_lost then c.check_date end) over running, s.last_seen_date) as last_seen_date,
        {% else %}
        min(case when not c.is_lost then c.check_date end) over running as first_seen_date,
        max(case when not c.is_lost then c.check_date end) over running as last_seen_date,
        {% endif %}
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
    window running as (
        partition by c.keyword, c.location_code, c.language_code, c.device, c.engine, c.domain
        order by c.check_date
        rows between unbounded preceding and current row
    )
),

final as (
    select
        keyword,
        location_code,
        language_code,
        device,
        engine,
        domain,
        check_date,
        previous_check_date,
        rank_absolute,
        rank_group,
        url,
        item_type,
        items_on_page,
        previous_rank_absolute,
        rank_change,
        is_new,
        is_lost,
        first_seen_date,
        last_seen_date,
    from seen
)

select * from final
order by check_date, keyword, location_code, language_code, device, engine, domain

-- The first check each domain ranked on, per series (keyword, location, language, device,
-- engine): rank_history reads a returning domain's first-seen date here instead of
-- scanning its own history every night. Checks are the series' daily checks
-- (int_serp__daily_checks), as in rank_history.
-- Incremental on first_seen_date, from the watermark: the rows from the last check date
-- the previous build read on are rebuilt from the checks since then, leaving out the
-- domains already seen before it.
with

daily_checks as (
    select * from int_serp__daily_checks
    {% if is_incremental %}
    where check_date >= {{ incremental_since }}
    {% endif %}
),

domain_placements as (
    select * from int_serp__domain_placements
    {% if is_incremental %}
    where check_date >= {{ incremental_since }}
    {% endif %}
),

first_in_scope as (
    select
        c.keyword,
        c.location_code,
        c.language_code,
        c.device,
        c.engine,
        p.domain,
        min(c.check_date) as first_seen_date,
    from domain_placements as p
    inner join daily_checks as c
        on c.task_id = p.task_id
        and c.result_index = p.result_index
    group by all
),

{% if is_incremental %}
seen_before as (
    select * from {{ this }}
    where first_seen_date < {{ incremental_since }}
),
{% endif %}

final as (
    select f.*,
    from first_in_scope as f
    {% if is_incremental %}
    anti join seen_before as s
        on s.keyword = f.keyword
        and s.location_code = f.location_code
        and s.language_code = f.language_code
        and s.device = f.device
        and s.engine = f.engine
        and s.domain = f.domain
    {% endif %}
)

select * from final
order by first_seen_date

-- One successful organic check per series (keyword, location, language, device, engine)
-- and day. When a series was checked twice on a day, the deeper check wins, then the later
-- one: a `depth: auto` escalation (bought at full depth after a shallow check the same
-- night) supersedes the shallow check. A failed task
-- has no result, so a failed or missing check is simply absent here.
-- Incremental on check_date (the day is part of the "latest of the day" partition, so the
-- days from the last built one on are rebuilt whole): a table of a row per series and day,
-- read by the marts' incremental builds without a window over a year of results each night.
with

results as (
    select * from stg_serp__results
    {% if is_incremental %}
    where check_date >= {{ incremental_since }}
    {% endif %}
),

organic as (
    select * from results
    where serp_type = 'organic'
),

latest_of_day as (
    select
        task_id,
        result_index,
        keyword,
        location_code,
        language_code,
        device,
        engine,
        check_date,
        checked_at,
        depth,
    from organic
    qualify row_number() over (
        partition by keyword, location_code, language_code, device, engine, check_date
        order by depth desc nulls last, checked_at desc, task_id desc, result_index desc
    ) = 1
)

select * from latest_of_day

-- One successful organic check per series (keyword, location, language, device, engine)
-- and day. When a series was checked twice on a day, the later check wins. A failed task
-- has no result, so a failed or missing check is simply absent here.
with

results as (
    select * from stg_serp__results
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
        order by checked_at desc, task_id desc, result_index desc
    ) = 1
)

select * from latest_of_day

-- The tracked domains of each SERP series: a domain is tracked on a keyword, location,
-- language, device and engine when it is in the track_domains of a pipeline job whose
-- tasks checked that series. Checks are linked to their job through the task id; rows
-- loaded without a task of a run (none today) have no tracked domains.
with

results as (
    select * from stg_serp__results
),

tasks as (
    select * from stg_pipeline__tasks
),

tracked as (
    select * from stg_pipeline__tracked_domains
),

series_jobs as (
    select distinct
        r.keyword,
        r.location_code,
        r.language_code,
        r.device,
        r.engine,
        t.pipeline,
        t.job,
    from results as r
    inner join tasks as t
        on t.task_id = r.task_id
    where r.serp_type = 'organic'
),

tracked_series as (
    select distinct
        s.keyword,
        s.location_code,
        s.language_code,
        s.device,
        s.engine,
        d.domain,
    from series_jobs as s
    inner join tracked as d
        on d.pipeline = s.pipeline
        and d.job = s.job
)

select * from tracked_series

-- The tasks the pipelines planned and posted, renamed and cast: which pipeline, job and
-- run a service task id belongs to, and why a `depth: auto` task bought its depth
-- (depth_reason: auto:seen, auto:shallow, auto:sweep, auto:escalation; null for a fixed depth).
-- Tasks never created have no task_id.
with

source as (
    select * from tasks
),

renamed as (
    select
        tag,
        run_id,
        pipeline,
        job,
        endpoint_id,
        task_id,
        state,
        depth_reason,
    from source
)

select * from renamed

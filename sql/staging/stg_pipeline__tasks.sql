-- The tasks the pipelines planned and posted, renamed and cast: which pipeline, job and
-- run a service task id belongs to. Tasks never created have no task_id.
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
    from source
)

select * from renamed

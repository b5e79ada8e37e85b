-- SERP task results, renamed and cast; nothing joined or filtered.
with

source as (
    select * from serp_results
),

renamed as (
    select
        task_id,
        result_index,
        run_id,
        se as engine,
        se_type as serp_type,
        keyword,
        location_code::integer as location_code,
        lower(language_code) as language_code,
        device,
        os,
        checked_at,
        check_date::date as check_date,
        items_count,
        depth,
    from source
)

select * from renamed

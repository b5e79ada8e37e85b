-- Monthly search volumes of keywords-data search_volume tasks, one row per keyword,
-- location, language, year and month, renamed and cast; `month_start` is the first day of
-- the month. The loader keeps months in a child table keyed by (task_id, result_index);
-- location and language come from the parent row in search_volume.
with

monthly as (
    select * from search_volume_monthly
),

keywords as (
    select task_id, result_index, location_code, language_code from search_volume
),

renamed as (
    select
        lower(monthly.keyword) as keyword,
        keywords.location_code::integer as location_code,
        lower(keywords.language_code) as language_code,
        monthly.year::integer as year,
        monthly.month::integer as month,
        make_date(monthly.year::integer, monthly.month::integer, 1) as month_start,
        monthly.search_volume::bigint as search_volume,
    from monthly
    inner join keywords
        on keywords.task_id = monthly.task_id
        and keywords.result_index = monthly.result_index
)

select * from renamed

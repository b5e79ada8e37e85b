-- Monthly search volume from both sources, one row per keyword, location, month and source:
--   keywords_data  keywords-data search_volume tasks (stg_keywords_data__search_volume_monthly)
--   labs           labs keyword_info.monthly_searches of ranked-keywords and related-keywords
--                  items (stg_labs__*_keywords_monthly)
-- Languages, and repeats of a keyword within a source (several tasks, targets or seeds),
-- collapse to the largest volume; months without a volume are left out.
with

keywords_data as (
    select * from stg_keywords_data__search_volume_monthly
),

labs_ranked as (
    select * from stg_labs__ranked_keywords_monthly
),

labs_related as (
    select * from stg_labs__related_keywords_monthly
),

unioned as (
    select keyword, location_code, month_start, search_volume, 'keywords_data' as source, from keywords_data
    union all
    select keyword, location_code, month_start, search_volume, 'labs' as source, from labs_ranked
    union all
    select keyword, location_code, month_start, search_volume, 'labs' as source, from labs_related
),

per_source as (
    select
        keyword,
        location_code,
        month_start,
        source,
        max(search_volume) as search_volume,
    from unioned
    where search_volume is not null
    group by keyword, location_code, month_start, source
)

select * from per_source

-- Monthly search volumes of labs ranked-keywords items (the keywords a target ranks for): the months of
-- keyword_info.monthly_searches, one row per keyword, location, language, month and source
-- row, renamed and cast; `month_start` is the first day of the month. The loader keeps the
-- months in a child table keyed by (task_id, result_index, item_index); location and
-- language come from the item's keyword_data, or from its result (the target) when the item
-- has none.
with

monthly as (
    select * from labs_ranked_keywords_monthly
),

items as (
    select task_id, result_index, item_index, location_code, language_code from labs_ranked_keywords
),

results as (
    select task_id, result_index, location_code, language_code from labs_ranked_keywords_targets
),

renamed as (
    select
        lower(monthly.keyword) as keyword,
        coalesce(items.location_code, results.location_code)::integer as location_code,
        lower(coalesce(items.language_code, results.language_code)) as language_code,
        monthly.year::integer as year,
        monthly.month::integer as month,
        make_date(monthly.year::integer, monthly.month::integer, 1) as month_start,
        monthly.search_volume::bigint as search_volume,
    from monthly
    inner join items
        on items.task_id = monthly.task_id
        and items.result_index = monthly.result_index
        and items.item_index = monthly.item_index
    left join results
        on results.task_id = monthly.task_id
        and results.result_index = monthly.result_index
)

select * from renamed

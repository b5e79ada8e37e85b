-- Monthly search volumes (keywords-data search_volume and labs keyword_info
-- monthly_searches, one row per keyword, location, language, year and month), renamed and
-- cast; `month_start` is the first day of the month.
with

source as (
    select * from search_volume_monthly
),

renamed as (
    select
        lower(keyword) as keyword,
        location_code::integer as location_code,
        lower(language_code) as language_code,
        year::integer as year,
        month::integer as month,
        make_date(year::integer, month::integer, 1) as month_start,
        search_volume::bigint as search_volume,
    from source
)

select * from renamed

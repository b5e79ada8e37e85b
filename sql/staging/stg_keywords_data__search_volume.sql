-- Current search volume per keyword, location and language (keywords-data search_volume
-- and labs keyword info), renamed and cast.
with

source as (
    select * from search_volume
),

renamed as (
    select
        lower(keyword) as keyword,
        location_code::integer as location_code,
        lower(language_code) as language_code,
        search_volume::bigint as search_volume,
    from source
)

select * from renamed

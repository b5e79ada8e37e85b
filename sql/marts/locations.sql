-- Locations: location_code -> name, country and type, for the location_code of every mart.
-- From the service's free locations lists that the runs' preflights read and keep
-- (reference_lists, read again a week later; no extra call): the SERP lists
-- (serp.engA.locations, and a country's list when one was read) and the AI keyword data
-- list. A code in several lists takes the SERP list's record, then the newest read.
-- country_name: the name of the country record with the same country_iso_code (a
-- country's own name for a country).
with

lists as (
    select * from reference_lists
    where endpoint_id like 'serp.%.locations%'
       or endpoint_id = 'ai_optimization.ai_keyword_data.locations_and_languages'
),

items as (
    select
        l.endpoint_id,
        l.fetched_at,
        unnest(from_json(l.items, '["JSON"]')) as item,
    from lists as l
),

parsed as (
    select
        try_cast(item->>'location_code' as integer) as location_code,
        item->>'location_name' as location_name,
        try_cast(item->>'location_code_parent' as integer) as location_code_parent,
        upper(item->>'country_iso_code') as country_iso_code,
        item->>'location_type' as location_type,
        endpoint_id as source_list,
        fetched_at,
        case when endpoint_id like 'serp.%' then 0 else 1 end as source_rank,
    from items
),

one_per_code as (
    select * from parsed
    where location_code is not null
    qualify row_number() over (
        partition by location_code order by source_rank, fetched_at desc, source_list
    ) = 1
),

countries as (
    select country_iso_code, min(location_name) as country_name,
    from one_per_code
    where location_type = 'Country' and country_iso_code is not null
    group by all
),

final as (
    select
        o.location_code,
        o.location_name,
        coalesce(c.country_name, case when o.location_type = 'Country' then o.location_name end) as country_name,
        o.country_iso_code,
        o.location_type,
        o.location_code_parent,
        o.source_list,
        o.fetched_at,
    from one_per_code as o
    left join countries as c
        using (country_iso_code)
)

select * from final
order by location_code

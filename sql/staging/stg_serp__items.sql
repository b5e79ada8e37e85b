-- SERP items, renamed and cast. `domain` is the host without a leading "www." and
-- lower-cased, so www.nike.com and nike.com are one domain; `served_domain` keeps the
-- value as served.
with

source as (
    select * from serp_items
),

renamed as (
    select
        task_id,
        result_index,
        item_index,
        check_date::date as check_date,
        type as item_type,
        rank_group::integer as rank_group,
        rank_absolute::integer as rank_absolute,
        regexp_replace(lower(domain), '^www\.', '') as domain,
        domain as served_domain,
        url,
        title,
    from source
)

select * from renamed

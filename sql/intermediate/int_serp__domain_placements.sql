-- The best placement of each domain on each page: the item with the lowest absolute rank
-- (ties by group rank, then item order), and how many items of the domain the page has.
-- Paid results are not ranks; items without a domain or an absolute rank cannot place.
-- is_organic: the best placement is an organic result; every other type (features, and a
-- type never seen before) is a non-organic placement.
with

items as (
    select * from stg_serp__items
),

placeable as (
    select * from items
    where domain is not null
      and domain <> ''
      and rank_absolute is not null
      and item_type <> 'paid'
),

ordered as (
    select
        *,
        -- one number that orders by absolute rank, then group rank, then item order
        rank_absolute::bigint * 10000000000 + coalesce(rank_group, 0)::bigint * 1000000 + item_index as placement_order,
    from placeable
),

placements as (
    select
        task_id,
        result_index,
        check_date,
        domain,
        min(rank_absolute) as rank_absolute,
        arg_min(rank_group, placement_order) as rank_group,
        arg_min(url, placement_order) as url,
        arg_min(item_type, placement_order) as item_type,
        arg_min(item_type, placement_order) = 'organic' as is_organic,
        count(*)::integer as items_on_page,
    from ordered
    group by task_id, result_index, check_date, domain
)

select * from placements

-- The best placement of each domain on each page: the item with the lowest absolute rank
-- (ties by group rank, then item order), and how many items of the domain the page has.
-- Paid results are not ranks; items without a domain or an absolute rank cannot place.
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

placements as (
    select
        task_id,
        result_index,
        check_date,
        domain,
        arg_min(rank_absolute, [rank_absolute, rank_group, item_index]) as rank_absolute,
        arg_min(rank_group, [rank_absolute, rank_group, item_index]) as rank_group,
        arg_min(url, [rank_absolute, rank_group, item_index]) as url,
        arg_min(item_type, [rank_absolute, rank_group, item_index]) as item_type,
        count(*)::integer as items_on_page,
    from placeable
    group by task_id, result_index, check_date, domain
)

select * from placements

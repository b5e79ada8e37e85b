-- Search-volume trends: one row per keyword, location and month that has data. A month
-- with no data has no row, and every comparison is by calendar offset, not by row, so a
-- gap never makes February look like January's successor.
--   source             where the month's volume comes from: keywords_data, or labs when
--                      keywords-data has no volume for that keyword, location and month
--   mom / yoy          change against the month before / the same month a year before
--                      (_change: in searches; _change_ratio: a fraction of the earlier
--                      month, 0.1 = +10%; _pct: the same fraction, deprecated)
--   avg_3m             mean of this and the two months before (null unless all three exist)
--   slope_12m          least-squares slope per month over the last 12 months
--                      (null with fewer than 6 months of data in that window)
--   seasonality_index  mean volume of this calendar month over the years, divided by the
--                      mean of the 12 calendar-month means (1 = an average month)
--   peak_month         calendar month (1-12) with the highest mean volume; ties: earliest
-- Within a source, several rows for one keyword, location and month (languages, tasks,
-- labs targets or seeds) give the largest volume (int_keywords__monthly_search_volume).
-- Keywords-data wins over labs for a month both have: it is the ads volume bought for
-- exactly these keywords, while labs keyword info is a database copy refreshed on its own
-- schedule. A month only labs has fills the series (e.g. keywords never sent to a
-- search_volume job, or months before the first one).
with

monthly as (
    select * from int_keywords__monthly_search_volume
),

per_month as (
    select
        keyword,
        location_code,
        month_start,
        arg_min(search_volume, source_rank) as search_volume,
        arg_min(source, source_rank) as source,
        year(month_start) * 12 + month(month_start) - 1 as month_index,
    from (
        select *, case source when 'keywords_data' then 0 else 1 end as source_rank,
        from monthly
    )
    group by keyword, location_code, month_start
),

windowed as (
    select
        *,
        max(search_volume) over (series range between 1 preceding and 1 preceding) as previous_month_volume,
        max(search_volume) over (series range between 12 preceding and 12 preceding) as year_ago_volume,
        avg(search_volume) over (series range between 2 preceding and current row) as mean_3m,
        count(*) over (series range between 2 preceding and current row) as months_in_3m,
        regr_slope(search_volume, month_index) over (series range between 11 preceding and current row) as fitted_slope_12m,
        count(*) over (series range between 11 preceding and current row) as months_in_12m,
    from per_month
    window series as (partition by keyword, location_code order by month_index)
),

calendar_months as (
    select
        keyword,
        location_code,
        month(month_start)::integer as calendar_month,
        avg(search_volume) as mean_volume,
    from per_month
    group by all
),

seasonality as (
    select
        keyword,
        location_code,
        calendar_month,
        mean_volume / nullif(avg(mean_volume) over (partition by keyword, location_code), 0) as seasonality_index,
        arg_max(calendar_month, [mean_volume, -calendar_month]) over (partition by keyword, location_code) as peak_month,
    from calendar_months
),

final as (
    select
        w.keyword,
        w.location_code,
        w.month_start,
        w.search_volume,
        w.source,
        w.search_volume - w.previous_month_volume as mom_change,
        (w.search_volume - w.previous_month_volume) / nullif(w.previous_month_volume, 0) as mom_pct,
        w.search_volume - w.year_ago_volume as yoy_change,
        (w.search_volume - w.year_ago_volume) / nullif(w.year_ago_volume, 0) as yoy_pct,
        -- mom_pct and yoy_pct are fractions (0.1 = +10%) despite their names: kept for older
        -- readers, deprecated for these
        (w.search_volume - w.previous_month_volume) / nullif(w.previous_month_volume, 0) as mom_change_ratio,
        (w.search_volume - w.year_ago_volume) / nullif(w.year_ago_volume, 0) as yoy_change_ratio,
        case when w.months_in_3m = 3 then w.mean_3m end as avg_3m,
        case when w.months_in_12m >= 6 then w.fitted_slope_12m end as slope_12m,
        s.seasonality_index,
        s.peak_month,
    from windowed as w
    inner join seasonality as s
        on s.keyword = w.keyword
        and s.location_code = w.location_code
        and s.calendar_month = month(w.month_start)
)

select * from final
order by keyword, location_code, month_start

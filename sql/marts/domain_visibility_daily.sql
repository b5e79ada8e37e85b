-- Daily visibility and share of voice per domain: the click-through-weighted sum of the
-- domain's best absolute rank over the keywords checked that day (int_serp__daily_placements;
-- weights from the ctr_weights seed, positions it does not list weigh 0). visibility_share is that sum as a
-- fraction (0-1) of the most a domain could get (rank 1 on every checked keyword;
-- visibility_pct, deprecated, is the same fraction under a name that said percent); share_of_voice
-- is the domain's part of all domains' visibility on the same day and market. is_tracked:
-- the domain is tracked on at least one keyword of the market (int_serp__tracked_domains),
-- whether or not it ranked on that keyword that day. Each day stands alone, so the
-- incremental build only recomputes days from the last built one on; a change of the
-- tracked domains rebuilds the table in full (full_refresh_on in the sidecar).
with

daily_placements as (
    select * from int_serp__daily_placements
    {% if is_incremental %}
    where check_date >= {{ incremental_since }}
    {% endif %}
),

ctr_weights as (
    select * from ctr_weights
),

tracked_domains as (
    select * from int_serp__tracked_domains
),

tracked_in_market as (
    select distinct location_code, language_code, device, engine, domain,
    from tracked_domains
),

daily_checks as (
    select * from int_serp__daily_checks
    {% if is_incremental %}
    where check_date >= {{ incremental_since }}
    {% endif %}
),

checked as (
    select
        check_date,
        location_code,
        language_code,
        device,
        engine,
        count(*) as keywords_checked,
    from daily_checks
    group by all
),

per_domain as (
    select
        check_date,
        location_code,
        language_code,
        device,
        engine,
        domain,
        count(*) as keywords_ranked,
        count(*) filter (where best_rank <= 10) as keywords_top10,
        sum(best_rank_ctr) as visibility_exact,
    from daily_placements
    group by all
),

final as (
    select
        d.check_date,
        d.location_code,
        d.language_code,
        d.device,
        d.engine,
        d.domain,
        t.domain is not null as is_tracked,
        c.keywords_checked,
        d.keywords_ranked,
        d.keywords_top10,
        d.visibility_exact::double as visibility,
        d.visibility_exact::double / (c.keywords_checked * (select max(ctr) from ctr_weights)) as visibility_share,
        -- deprecated: the same fraction under its first name, kept for older readers
        d.visibility_exact::double / (c.keywords_checked * (select max(ctr) from ctr_weights)) as visibility_pct,
        (d.visibility_exact / nullif(sum(d.visibility_exact) over market, 0))::double as share_of_voice,
    from per_domain as d
    inner join checked as c
        using (check_date, location_code, language_code, device, engine)
    left join tracked_in_market as t
        on t.location_code = d.location_code
        and t.language_code = d.language_code
        and t.device = d.device
        and t.engine = d.engine
        and t.domain = d.domain
    window market as (partition by d.check_date, d.location_code, d.language_code, d.device, d.engine)
)

select * from final
order by check_date

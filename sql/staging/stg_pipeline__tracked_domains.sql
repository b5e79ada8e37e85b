-- The domains each SERP job tracks (track_domains of the pipeline file, as its latest run
-- listed them), renamed and cast. `domain` is lower-cased without a leading "www.", the
-- way stg_serp__items writes the domains of a page.
with

source as (
    select * from tracked_domains
),

renamed as (
    select
        pipeline,
        job,
        regexp_replace(lower(domain), '^www\.', '') as domain,
        domain as listed_domain,
        first_seen_at,
    from source
)

select * from renamed

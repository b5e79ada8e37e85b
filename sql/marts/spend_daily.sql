-- What was charged, per UTC day, pipeline, endpoint and run, from the ledger's charge
-- headers (exact decimals). Free calls count in `calls`; calls without a charge header
-- count in `calls_without_charge`.
with

calls as (
    select * from stg_ledger__calls
),

per_day as (
    select
        call_date,
        pipeline,
        endpoint_id,
        run_id,
        count(*) as calls,
        count(*) filter (where charge_cny > 0) as charged_calls,
        count(*) filter (where charge_cny is null) as calls_without_charge,
        coalesce(sum(charge_cny), 0)::decimal(18, 6) as charge_cny,
        coalesce(sum(cost_usd), 0)::decimal(18, 6) as cost_usd,
        min(called_at) as first_call_at,
        max(called_at) as last_call_at,
    from calls
    group by all
)

select * from per_day
order by call_date, pipeline, endpoint_id, run_id

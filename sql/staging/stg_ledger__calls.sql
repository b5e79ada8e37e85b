-- Ledger calls, renamed and cast. `call_date` is the UTC calendar day of the call.
with

source as (
    select * from ledger
),

renamed as (
    select
        call_id,
        run_id,
        pipeline,
        endpoint_id,
        method,
        http_status,
        request_id,
        charge_cny::decimal(18, 6) as charge_cny,
        cost_usd::decimal(18, 6) as cost_usd,
        called_at,
        timezone('UTC', called_at)::date as call_date,
    from source
)

select * from renamed

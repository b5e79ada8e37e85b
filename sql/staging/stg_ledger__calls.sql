-- Ledger calls and refund rows, renamed and cast. `call_date` is the UTC calendar day of the
-- call (of a refund row: the day the refund was seen). `is_refund` marks refund rows;
-- `is_estimated` a charge no header gave (a POST whose answer never arrived, priced from
-- id_list's USD cost; false on rows written before the ledger had the column).
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
        coalesce(refund_cny, 0)::decimal(18, 6) as refund_cny,
        cost_usd::decimal(18, 6) as cost_usd,
        task_id,
        task_id is not null as is_refund,
        coalesce(charge_estimated, false) as is_estimated,
        called_at,
        timezone('UTC', called_at)::date as call_date,
    from source
)

select * from renamed

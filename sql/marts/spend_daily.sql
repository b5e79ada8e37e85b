-- What was spent, per UTC day, pipeline, endpoint and run, from the ledger (exact
-- decimals): `charge_cny` is net (the charge headers of the calls less the refunds of
-- unused depth seen that day), `gross_charge_cny` what the calls were charged and
-- `refund_cny` what came back. Free calls count in `calls`; calls without a charge header
-- count in `calls_without_charge` (a call whose answer never arrived, until priced, among
-- them); `estimated_charge_cny` is the part of `gross_charge_cny` that no header gave (such a
-- call priced from id_list's USD cost: ledger.charge_estimated). Refund rows are not calls.
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
        count(*) filter (where not is_refund) as calls,
        count(*) filter (where not is_refund and charge_cny > 0) as charged_calls,
        count(*) filter (where not is_refund and charge_cny is null) as calls_without_charge,
        coalesce(sum(charge_cny), 0)::decimal(18, 6) as charge_cny,
        coalesce(sum(charge_cny) filter (where not is_refund), 0)::decimal(18, 6) as gross_charge_cny,
        coalesce(sum(charge_cny) filter (where not is_refund and is_estimated), 0)::decimal(18, 6) as estimated_charge_cny,
        coalesce(sum(refund_cny), 0)::decimal(18, 6) as refund_cny,
        count(*) filter (where is_refund) as refunded_tasks,
        coalesce(sum(cost_usd), 0)::decimal(18, 6) as cost_usd,
        min(called_at) as first_call_at,
        max(called_at) as last_call_at,
    from calls
    group by all
)

select * from per_day
order by call_date, pipeline, endpoint_id, run_id

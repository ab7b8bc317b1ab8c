-- One row per configuration (int_workload_configurations) × utilisation scenario (the workload's
-- declared utilisation, and 30 / 60 / 100 % for sensitivity): hours needed and billed, every cost
-- line (exact to the micro-dollar), the total, cost per completed unit, status and every exclusion reason.
-- Conventions (docs/cost-model.md): 730 h per month; each line rounded half-up to 6 decimals.
with configurations as (
    select * from int_workload_configurations
),

workloads as (
    select workload_id, utilisation from stg_workloads
),

scenarios as (
    select workload_id, 'declared' as utilisation_scenario, utilisation::decimal(9, 6) as utilisation_applied
    from workloads
    union all
    select w.workload_id, s.label, s.u::decimal(9, 6)
    from workloads as w
    cross join (values ('30pct', 0.3), ('60pct', 0.6), ('100pct', 1.0)) as s(label, u)
),

hours as (
    select
        c.*,
        s.utilisation_scenario,
        s.utilisation_applied,
        -- Effective throughput = measured × utilisation, so the hours at work stretch by 1 / utilisation.
        c.quantity / c.units_per_hour as busy_hours_exact,
        c.quantity / c.units_per_hour / s.utilisation_applied + c.setup_hours as hours_needed_exact,
        c.billing_model in ('monthly', 'dedicated') as is_billed_monthly
    from configurations as c
    join scenarios as s using (workload_id)
),

billed as (
    select
        *,
        case
            when hours_needed_exact is null then null
            -- Monthly / dedicated: whole months (730 h), at least the minimum term.
            when is_billed_monthly then greatest(ceil(hours_needed_exact / 730), ceil(min_term_hours / 730), 1)
            -- A commitment is paid for in whole terms.
            when commitment_term_hours is not null then greatest(ceil(hours_needed_exact / commitment_term_hours), 1)
            -- Otherwise whole billing increments (second / minute / hour / month).
            else ceil(hours_needed_exact * 3600 / billing_granularity_s)
        end::hugeint as billing_periods,
        case
            when is_billed_monthly then 'month'
            when commitment_term_hours is not null then 'commitment_term'
            else billing_granularity
        end as billing_period
    from hours
),

billed_seconds as (
    select
        *,
        case
            when billing_periods is null then null
            when is_billed_monthly then billing_periods * 2628000
            when commitment_term_hours is not null
                then greatest(billing_periods * ceil(commitment_term_hours * 3600), ceil(min_term_hours * 3600))
            else greatest(billing_periods * billing_granularity_s, ceil(min_term_hours * 3600))
        end::hugeint as billed_s
    from billed
),

lines as (
    select
        *,
        -- Exact integer arithmetic in micro-dollars, rounded half-up to the micro-dollar (values are ≥ 0).
        case
            when is_billed_monthly and usd_per_node_month is not null
                then round(node_count * (billed_s // 2628000) * usd_per_node_month, 6)
            else ((node_count * billed_s * (usd_per_node_hour * 1000000)::hugeint + 1800) // 3600) * 0.000001
        end::decimal(38, 6) as compute_cost_usd,
        (((storage_gb * 1000000)::hugeint * (storage_usd_per_gb_month * 1000000)::hugeint * billed_s
            + 1314000000000) // 2628000000000 * 0.000001)::decimal(38, 6) as storage_cost_usd,
        round(egress_gb * egress_usd_per_gb, 6)::decimal(38, 6) as egress_cost_usd,
        ((node_count * billed_s * (licence_usd_per_hour * 1000000)::hugeint + 1800) // 3600
            * 0.000001)::decimal(38, 6) as licence_cost_usd,
        round(node_count * setup_fee_usd, 6)::decimal(38, 6) as setup_cost_usd,
        -- Support is billed per node per month started (730 h).
        round(node_count * support_usd_per_month * ((billed_s + 2627999) // 2628000), 6)::decimal(38, 6)
            as support_cost_usd
    from billed_seconds
),

totals as (
    select
        *,
        (compute_cost_usd + storage_cost_usd + egress_cost_usd + licence_cost_usd + setup_cost_usd
            + support_cost_usd)::decimal(38, 6) as total_cost_usd,
        list_filter([
            -- Runs that match in every way but the SLOs: SLO_NOT_MET; no run at all (or only mismatched ones): NO_BENCHMARK.
            case when units_per_hour is null then case when is_slo_not_met then 'SLO_NOT_MET' else 'NO_BENCHMARK' end end,
            case when stale_reason is not null then stale_reason end,
            case when usd_per_node_hour is null then 'FX_RATE_MISSING' end,
            case when memory_fits = false then 'DOES_NOT_FIT' end,
            case when precision_supported = false then 'PRECISION_UNSUPPORTED' end,
            -- An unknown stack stays rankable; compat_verdict shows it.
            case when compat_verdict = 'unsupported' then 'ROCM_UNSUPPORTED' end,
            case when validation_verdict = 'fail' then 'VALIDATION_FAILED' end,
            scope_reason,
            price_band_reason
        ], lambda r: r is not null) as exclusion_reasons
    from lines
),

final as (
    select
        * exclude (busy_hours_exact, hours_needed_exact, billed_s),
        busy_hours_exact::decimal(38, 6) as busy_hours,
        hours_needed_exact::decimal(38, 6) as hours_needed,
        (billed_s / 3600)::decimal(38, 6) as hours_billed,
        billed_s as billed_seconds,
        (total_cost_usd / quantity)::decimal(38, 12) as cost_per_unit_usd,
        (total_cost_usd * 1000000 / quantity)::decimal(38, 6) as cost_per_million_units_usd,
        case
            when len(exclusion_reasons) > 0 then 'excluded'
            when throughput_source = 'estimate' then 'estimated'
            else 'ranked'
        end as status,
        billing_model = 'spot' as is_interruptible,
        list_filter([
            case when billing_model = 'spot'
                then 'SPOT_INTERRUPTION_RISK: the provider may reclaim the node; no discount for lost work is applied' end,
            case when throughput_source = 'estimate'
                then 'ESTIMATED_THROUGHPUT: ' || estimate_basis end,
            case when list_contains(offer_warnings, 'PRICE_OUTLIER')
                then 'PRICE_OUTLIER: ' || scope_detail || '; confirm the price with the provider' end,
            case when node_count > 1 and benchmark_node_count is null
                then format('MULTI_NODE: {} nodes; throughput from runs on {} GPUs in total that do not state their node count', node_count, gpu_count)
                when node_count > 1
                then format('MULTI_NODE: {} nodes; throughput from runs on {} nodes, {} GPUs in total', node_count, benchmark_node_count, gpu_count) end
        ], lambda r: r is not null) as risk_notes
    from totals
    -- An estimate is offered only where nothing but a benchmark is missing.
    where throughput_source = 'measured' or len(exclusion_reasons) = 0
)

select * from final

-- One row per workload × current offer: hours needed and billed, every cost line, total and cost
-- per completed unit — or the reasons the configuration is excluded.
with workloads as (
    select * from stg_workloads
),

offers_now as (
    select * from offers
),

throughput as (
    select * from int_workload_throughput
),

memory as (
    select * from memory_fit
),

compat as (
    select * from compat_checks
),

latest_validations as (
    -- Only an offer's newest on-hardware validation counts.
    select offer_id, validation_id, verdict from hardware_validations where is_latest_for_offer
),

candidates as (
    -- One node per configuration: its GPU count is the offer's GPUs per node.
    select
        w.workload_id, w.unit, w.quantity, w.storage_gb, w.egress_gb, w.setup_hours,
        o.*,
        o.gpus_per_node as gpu_count,
        t.units_per_hour, t.benchmark_runs, t.benchmark_run_ids,
        m.fits as memory_fits, m.precision_supported, m.min_gpus,
        c.verdict as compat_verdict, c.reasons as compat_reasons,
        v.validation_id, v.verdict as validation_verdict
    from workloads as w
    cross join offers_now as o
    left join throughput as t
        on t.workload_id = w.workload_id
        and t.gpu_model = o.gpu_model
        and t.gpu_count = o.gpus_per_node
        and (t.run_provider is null or t.run_provider = o.provider)
    -- Workloads without a model have no memory_fit rows: not memory-checked, never excluded for it.
    left join memory as m
        on m.workload_id = w.workload_id and m.gpu_model = o.gpu_model and m.gpu_count = o.gpus_per_node
    left join compat as c
        on c.gpu_model = o.gpu_model
        and c.rocm_version is not distinct from o.rocm_version
        and c.os is not distinct from o.os
        and c.kernel is not distinct from o.kernel
        and c.amdgpu_driver_version is not distinct from o.amdgpu_driver_version
        and c.torch_version is null
        and c.engine is not distinct from lower(w.engine)
    left join latest_validations as v
        on v.offer_id = o.offer_id
    -- Provider-specific runs win over generic ones for the same configuration.
    qualify row_number() over (
        partition by w.workload_id, o.source_name, o.provider, o.offer_id, o.billing_model,
            o.tier, o.commitment_term_hours
        order by t.run_provider nulls last
    ) = 1
),

hours as (
    select
        *,
        (quantity / units_per_hour + setup_hours)::decimal(38, 6) as hours_needed
    from candidates
),

billed as (
    select
        *,
        -- Round up to the billing granularity, then apply the minimum term.
        case when hours_needed is not null then greatest(
            (ceil(hours_needed * 3600 / billing_granularity_s) * billing_granularity_s / 3600)::decimal(38, 6),
            min_term_hours,
            -- A commitment is paid for its whole term.
            coalesce(commitment_term_hours, 0)
        ) end as hours_billed
    from hours
),

lines as (
    select
        *,
        (hours_billed * usd_per_node_hour)::decimal(38, 6) as compute_cost_usd,
        (storage_gb * storage_usd_per_gb_month * hours_billed / 730)::decimal(38, 6) as storage_cost_usd,
        (egress_gb * egress_usd_per_gb)::decimal(38, 6) as egress_cost_usd,
        (licence_usd_per_hour * hours_billed)::decimal(38, 6) as licence_cost_usd,
        setup_fee_usd::decimal(38, 6) as setup_cost_usd,
        -- Support is billed per month started (730 h/month).
        (support_usd_per_month * ceil(hours_billed / 730))::decimal(38, 6) as support_cost_usd
    from billed
),

totals as (
    select
        *,
        (compute_cost_usd + storage_cost_usd + egress_cost_usd + licence_cost_usd
            + setup_cost_usd + support_cost_usd)::decimal(38, 6) as total_cost_usd,
        list_filter([
            case when units_per_hour is null then 'NO_BENCHMARK' end,
            case when stale_reason is not null then stale_reason end,
            case when usd_per_node_hour is null then 'FX_RATE_MISSING' end,
            case when memory_fits = false then 'DOES_NOT_FIT' end,
            case when precision_supported = false then 'PRECISION_UNSUPPORTED' end,
            -- An unknown stack stays rankable; compat_verdict shows it.
            case when compat_verdict = 'unsupported' then 'ROCM_UNSUPPORTED' end,
            case when validation_verdict = 'fail' then 'VALIDATION_FAILED' end,
            scope_reason
        ], lambda r: r is not null) as exclusion_reasons
    from lines
),

final as (
    select
        workload_id, offer_id, provider, gpu_model, gpu_count, billing_model,
        usd_per_gpu_hour, usd_per_node_hour,
        unit, quantity, units_per_hour, benchmark_runs, benchmark_run_ids,
        hours_needed, hours_billed, billing_granularity, min_term_hours,
        compute_cost_usd, storage_cost_usd, egress_cost_usd, licence_cost_usd,
        setup_cost_usd, support_cost_usd, total_cost_usd,
        (total_cost_usd / quantity)::decimal(38, 12) as cost_per_unit_usd,
        case when len(exclusion_reasons) = 0 then 'ranked' else 'excluded' end as status,
        exclusion_reasons,
        observed_at, is_stale, source_name,
        memory_fits, min_gpus, compat_verdict, compat_reasons,
        validation_id, validation_verdict,
        tier, commitment_term_hours
    from totals
)

select * from final

-- One row per workload × current offer (billing option) × throughput source: the configuration to
-- cost (one node, or as many nodes as the memory-fit minimum needs), its feasibility facts, and its
-- throughput — measured, or (only where no run matches) a separately labelled estimate. An offer seen
-- in several sources is costed once, from its latest observation (also_seen_in lists the others).
-- The decisions are made upstream: which offers and sources (int_offers_now), node count and memory
-- fit per shape (int_shape_configurations), throughput per shape (int_shape_measured_throughputs,
-- int_shape_estimated_throughputs); here they meet the workload, the offer, ROCm and validation.
-- Incremental per offer option (macros/workload_cost_incremental.sql): only what changes a cost, never
-- the clock (observed_at and staleness join on in workload_cost_lines_now); a build from the published
-- warehouse recomputes only the options whose costed inputs changed (built_by: this build's id).
{{ config(materialized='incremental', incremental_strategy='append',
          pre_hook="{{ delete_changed_costed_options() }}") }}

with workloads as (
    select * from {{ ref('int_workloads') }}
),

offers_now as (
    -- The options to cost in this build, with their fingerprints: in an incremental build only the
    -- new and changed ones (the others' rows stay as they are).
    select o.*, f.costed_inputs_hash
    from (select {{ costed_offer_columns() }} from {{ ref('int_offers_now') }}) as o
    join ({{ costed_option_fingerprints() }}) as f using (offer_option_id)
    where {{ costed_option_is_new('o') }}
),

shape_throughputs as (
    -- One measured row per shape (its throughput may be null), plus an estimate row where one exists.
    select * exclude (inputs_hash), 'measured' as throughput_source, null::varchar as estimate_basis
    from {{ ref('int_shape_measured_throughputs') }}
    union all by name
    select *, 'estimate' as throughput_source from {{ ref('int_shape_estimated_throughputs') }}
),

compat as (
    select * from {{ ref('int_compat_checks') }}
),

spot_assumptions as (
    -- workloads.yaml spot_interruptions: one row per workload × provider the user gave an assumption for.
    select workload_id, lower(a.provider) as provider_key, a.interruptions_per_hour, a.lost_hours_per_interruption, a.source
    from (
        select workload_id, unnest(from_json(spot_interruptions_json, '[{"provider": "VARCHAR",
            "interruptions_per_hour": "DECIMAL(18,6)", "lost_hours_per_interruption": "DECIMAL(18,6)",
            "source": "VARCHAR"}]')) as a
        from workloads where spot_interruptions_json is not null
    )
),

latest_validations as (
    -- Only an offer's newest on-hardware validation counts.
    select offer_id, validation_id, verdict from {{ ref('int_latest_validations') }}
),

final as (
    select
        w.workload_id, w.kind, w.unit, w.quantity, w.storage_gb, w.egress_gb, w.setup_hours,
        w.utilisation, lower(w.engine) as workload_engine,
        w.demand_kind, w.deadline_hours, w.units_per_month, w.period_months, w.peak_units_per_hour,
        -- The user's own interruption assumption for this provider (spot offers only; never a default).
        si.interruptions_per_hour as spot_interruptions_per_hour,
        si.lost_hours_per_interruption as spot_lost_hours_per_interruption, si.source as spot_assumption_source,
        o.offer_option_id, o.offer_id, o.provider, o.gpu_model, o.gpus_per_node, o.billing_model, o.tier,
        o.commitment_term_hours, o.usd_per_gpu_hour, o.usd_per_node_hour, o.price_amount, o.currency,
        o.price_unit, o.price_scope, o.billing_granularity, o.billing_granularity_s, o.min_term_hours,
        o.storage_usd_per_gb_month, o.egress_usd_per_gb, o.licence_usd_per_hour, o.setup_fee_usd,
        o.support_usd_per_month, o.scope_reason, o.price_band_reason,
        o.warnings as offer_warnings, o.scope_detail,
        o.source_name, o.rocm_version, o.os, o.kernel, o.amdgpu_driver_version, o.fx_rate_date,
        t.one_node_fits, t.precision_supported, t.min_gpus, t.node_count, t.gpu_count,
        o.usd_per_node_month,
        t.memory_fits, t.units_per_hour, t.benchmark_runs, t.benchmark_run_ids, t.benchmark_node_count,
        t.is_slo_not_met, t.is_perf_implausible, t.benchmark_match_detail, t.throughput_source, t.estimate_basis,
        -- ROCm applies to AMD GPUs only: an NVIDIA offer's stack is not a ROCm question.
        case when o.vendor != 'AMD' then 'not_applicable' else cc.verdict end as compat_verdict,
        case when o.vendor != 'AMD'
            then [format('{} is an {} GPU: the ROCm compatibility check does not apply', o.gpu_model, o.vendor)]
            else cc.reasons
        end as compat_reasons,
        v.validation_id, v.verdict as validation_verdict,
        o.vendor, o.observed_at_basis,
        o.costed_inputs_hash, '{{ invocation_id }}' as built_by
    from workloads as w
    cross join offers_now as o
    join shape_throughputs as t
        on t.workload_id = w.workload_id and t.provider = o.provider and t.gpu_model = o.gpu_model
        and t.gpus_per_node = o.gpus_per_node
    left join compat as cc
        on cc.gpu_model = o.gpu_model
        and cc.rocm_version is not distinct from o.rocm_version
        and cc.os is not distinct from o.os
        and cc.kernel is not distinct from o.kernel
        and cc.amdgpu_driver_version is not distinct from o.amdgpu_driver_version
        and cc.torch_version is null
        and cc.engine is not distinct from lower(w.engine)
    left join latest_validations as v
        on v.offer_id = o.offer_id
    left join spot_assumptions as si
        on o.billing_model = 'spot' and si.workload_id = w.workload_id and si.provider_key = lower(o.provider)
)

select * from final

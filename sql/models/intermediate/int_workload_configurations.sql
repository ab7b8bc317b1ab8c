-- One row per workload × current offer (billing option) × throughput source: the configuration to
-- cost (one node, or as many nodes as the memory-fit minimum needs), its feasibility facts, and its
-- throughput — measured, or (only where no run matches) a separately labelled estimate. An offer seen
-- in several sources is costed once, from its latest observation (also_seen_in lists the others).
with workloads as (
    select * from {{ ref('stg_workloads') }}
),

fx as (
    select currency, usd_per_unit::decimal(38, 9) as usd_per_unit, rate_date::date as rate_date
    from {{ source('ref', 'fx_rates') }}
),

offers_priced as (
    -- A pending quote carries no price yet: there is nothing to cost.
    select * from {{ ref('int_offers') }} where price_amount is not null
),

source_observations as (
    -- Each source's newest observation of an offer key: provider × GPU model × GPUs per node × billing
    -- option (billing model, tier, commitment term); a dated one first (undated = landed_at).
    select
        provider, gpu_model, gpus_per_node, billing_model, tier, commitment_term_hours, source_name,
        bool_or(observed_at_basis != 'landed_at') as is_dated,
        coalesce(max(observed_at) filter (where observed_at_basis != 'landed_at'), max(observed_at))
            as latest_observed_at,
        list(distinct offer_id order by offer_id) as offer_ids
    from offers_priced
    group by all
),

source_ranks as (
    -- The same offer seen in several sources is costed once: the latest observation wins (ties: the
    -- source name), so a catalog fetched today beats a price point noted last year. An undated one
    -- (its observed_at is only when the file landed) never beats a dated one (docs/inputs.md).
    select
        *,
        row_number() over (
            partition by provider, gpu_model, gpus_per_node, billing_model, tier, commitment_term_hours
            order by is_dated desc, latest_observed_at desc, source_name
        ) as source_rank
    from source_observations
),

seen_elsewhere as (
    -- The sources that lost, kept as evidence on the winner.
    select
        w.provider, w.gpu_model, w.gpus_per_node, w.billing_model, w.tier, w.commitment_term_hours,
        list(format('{} ({}, {} {})', l.source_name, array_to_string(l.offer_ids, ', '),
                case when l.is_dated then 'observed' else 'undated, landed' end,
                strftime(l.latest_observed_at, '%Y-%m-%d'))
            order by l.is_dated desc, l.latest_observed_at desc, l.source_name) as also_seen_in
    from source_ranks as w
    join source_ranks as l
        on l.provider = w.provider and l.gpu_model = w.gpu_model and l.gpus_per_node = w.gpus_per_node
        and l.billing_model = w.billing_model and l.tier is not distinct from w.tier
        and l.commitment_term_hours is not distinct from w.commitment_term_hours
        and l.source_rank > 1
    where w.source_rank = 1
    group by all
),

offers_now as (
    select
        o.*,
        coalesce(e.also_seen_in, []) as also_seen_in,
        -- A monthly price is billed as the provider states it, not via its rounded hourly equivalent.
        case when o.price_unit = 'month' then (o.price_amount * fx.usd_per_unit
            * case when o.price_scope = 'per_gpu' then o.gpus_per_node else 1 end)::decimal(38, 9)
        end as usd_per_node_month
    from offers_priced as o
    join source_ranks as r
        on r.source_name = o.source_name and r.provider = o.provider and r.gpu_model = o.gpu_model
        and r.gpus_per_node = o.gpus_per_node and r.billing_model = o.billing_model
        and r.tier is not distinct from o.tier
        and r.commitment_term_hours is not distinct from o.commitment_term_hours
        and r.source_rank = 1
    left join seen_elsewhere as e
        on e.provider = o.provider and e.gpu_model = o.gpu_model and e.gpus_per_node = o.gpus_per_node
        and e.billing_model = o.billing_model and e.tier is not distinct from o.tier
        and e.commitment_term_hours is not distinct from o.commitment_term_hours
    left join fx on fx.currency = o.currency and fx.rate_date = o.fx_rate_date
),

throughputs as (
    select * from {{ ref('int_workload_throughput') }}
),

measured as (
    -- NaN, ±Inf or zero throughput is no measurement: such a configuration has no benchmark.
    select * from throughputs where isfinite(units_per_hour) and units_per_hour > 0
),

memory as (
    select * from {{ ref('int_memory_fit') }}
),

compat as (
    select * from {{ ref('int_compat_checks') }}
),

latest_validations as (
    -- Only an offer's newest on-hardware validation counts.
    select offer_id, validation_id, verdict from {{ ref('stg_hardware_validations') }} where is_latest_for_offer
),

gpus as (
    select model as gpu_model, memory_bandwidth_tbps from {{ source('ref', 'gpus') }}
),

shapes as (
    -- Everything below up to `final` depends on the workload and the offer's shape only (provider ×
    -- GPU model × GPUs per node), not on the offer itself: decided once per shape on narrow rows, so
    -- the workload × offer rows (a million at 200 workloads × 5,000 offers) only look it up. Deciding
    -- it on the wide rows ran out of the build's 1 GB memory limit at that scale.
    select w.workload_id, w.kind, o.provider, o.gpu_model, o.gpus_per_node
    from workloads as w
    cross join (select distinct provider, gpu_model, gpus_per_node from offers_now) as o
),

sized as (
    select
        s.*,
        m.fits as one_node_fits, m.precision_supported, m.min_gpus,
        -- More nodes only when one node's memory is not enough: as many as the fewest GPUs that fit
        -- need. Only multi-GPU servers scale out; a single-GPU VM that is too small does not fit.
        case when m.fits = false and m.min_gpus > s.gpus_per_node and s.gpus_per_node > 1
            then ((m.min_gpus + s.gpus_per_node - 1) // s.gpus_per_node)::integer else 1 end as node_count
    from shapes as s
    -- Workloads without a model have no memory_fit rows: not memory-checked, never excluded for it.
    left join memory as m
        on m.workload_id = s.workload_id and m.gpu_model = s.gpu_model and m.gpu_count = s.gpus_per_node
),

configured as (
    select
        s.*,
        s.node_count * s.gpus_per_node as gpu_count,
        case
            when s.node_count = 1 then s.one_node_fits
            -- memory_fit has no row for this count: bytes per GPU only fall as GPUs are added,
            -- so the memory-fit minimum or more fits.
            else coalesce(mn.fits, s.node_count * s.gpus_per_node >= s.min_gpus)
        end as memory_fits
    from sized as s
    left join memory as mn
        on s.node_count > 1 and mn.workload_id = s.workload_id and mn.gpu_model = s.gpu_model
        and mn.gpu_count = s.node_count * s.gpus_per_node
),

with_measured as (
    select
        c.*,
        t.units_per_hour, t.benchmark_runs, t.benchmark_run_ids, t.node_count as benchmark_node_count
    from configured as c
    left join measured as t
        on t.workload_id = c.workload_id
        and t.gpu_model = c.gpu_model
        -- Throughput is measured at this total GPU count or not at all: never extrapolated.
        and t.gpu_count = c.gpu_count
        -- Runs that state their node count measure that many nodes only.
        and (t.node_count is null or t.node_count = c.node_count)
        and (t.run_provider is null or t.run_provider = c.provider)
    -- Provider-specific runs win over generic ones, runs stating their node count over the rest.
    qualify row_number() over (
        partition by c.workload_id, c.provider, c.gpu_model, c.gpus_per_node
        order by t.run_provider nulls last, t.node_count nulls last
    ) = 1
),

near_misses as (
    -- Runs of this shape's GPU model, count and node count that came close: why they did not count.
    -- Only an SLO miss on runs that match otherwise makes a configuration SLO_NOT_MET.
    select
        c.workload_id, c.provider, c.gpu_model, c.gpus_per_node,
        len(flatten(list(t.slo_failed_run_ids))) > 0 as has_slo_failures,
        len(flatten(list(t.perf_implausible_run_ids))) > 0 as has_perf_implausible,
        string_agg(t.mismatch_detail, ' | ' order by t.mismatch_detail) as benchmark_match_detail
    from with_measured as c
    join throughputs as t
        on t.workload_id = c.workload_id and t.gpu_model = c.gpu_model and t.gpu_count = c.gpu_count
        and (t.node_count is null or t.node_count = c.node_count)
        and (t.run_provider is null or t.run_provider = c.provider)
    where c.units_per_hour is null
    group by all
),

with_near_misses as (
    select
        c.*,
        coalesce(n.has_slo_failures, false) as is_slo_not_met,
        -- Only runs far above every published result (unconfirmed) measured it: PERF_IMPLAUSIBLE.
        coalesce(n.has_perf_implausible, false) and not coalesce(n.has_slo_failures, false) as is_perf_implausible,
        n.benchmark_match_detail
    from with_measured as c
    left join near_misses as n
        on n.workload_id = c.workload_id and n.provider = c.provider and n.gpu_model = c.gpu_model
        and n.gpus_per_node = c.gpus_per_node
),

estimate_bases as (
    -- For a single-node shape with no matching run: the same workload measured at the same GPU count
    -- on the same GPU model elsewhere (factor 1), or — for inference, where decoding is memory-
    -- bandwidth bound — on the GPU model with the nearest memory bandwidth, scaled by it.
    select
        c.workload_id, c.provider, c.gpu_model, c.gpus_per_node,
        t.gpu_model as basis_gpu_model, t.run_provider as basis_provider,
        t.units_per_hour as basis_units_per_hour, t.benchmark_runs, t.benchmark_run_ids,
        (target.memory_bandwidth_tbps / basis.memory_bandwidth_tbps) as scale
    from with_near_misses as c
    join measured as t
        on t.workload_id = c.workload_id and t.gpu_count = c.gpu_count
        and (t.node_count is null or t.node_count = c.node_count)
    left join gpus as target on target.gpu_model = c.gpu_model
    left join gpus as basis on basis.gpu_model = t.gpu_model
    where c.units_per_hour is null
        -- Measured here and too slow for the SLOs (or implausibly fast): no estimate from elsewhere overrides that.
        and not c.is_slo_not_met and not c.is_perf_implausible
        and c.node_count = 1
        and (t.gpu_model = c.gpu_model
            or (c.kind = 'inference' and target.memory_bandwidth_tbps > 0 and basis.memory_bandwidth_tbps > 0))
    qualify row_number() over (
        partition by c.workload_id, c.provider, c.gpu_model, c.gpus_per_node
        order by t.gpu_model = c.gpu_model desc,
            abs(target.memory_bandwidth_tbps - basis.memory_bandwidth_tbps), t.gpu_model,
            t.run_provider nulls first
    ) = 1
),

measured_rows as (
    select *, 'measured' as throughput_source, null::varchar as estimate_basis from with_near_misses
),

estimate_rows as (
    select
        c.* replace (
            case when e.basis_gpu_model = c.gpu_model then e.basis_units_per_hour
                else e.basis_units_per_hour * e.scale end as units_per_hour,
            e.benchmark_runs as benchmark_runs,
            e.benchmark_run_ids as benchmark_run_ids
        ),
        'estimate' as throughput_source,
        case when e.basis_gpu_model = c.gpu_model
            then format('{} × {} measured at {} (another provider; same GPU model and count)',
                c.gpu_count, e.basis_gpu_model, coalesce(e.basis_provider, 'any provider'))
            else format('{} × {} measured at {}, scaled by memory bandwidth {} / {} TB/s = {}',
                c.gpu_count, e.basis_gpu_model, coalesce(e.basis_provider, 'any provider'),
                g.memory_bandwidth_tbps, b.memory_bandwidth_tbps, round(e.scale, 4))
        end as estimate_basis
    from with_near_misses as c
    join estimate_bases as e
        on e.workload_id = c.workload_id and e.provider = c.provider and e.gpu_model = c.gpu_model
        and e.gpus_per_node = c.gpus_per_node
    left join gpus as g on g.gpu_model = c.gpu_model
    left join gpus as b on b.gpu_model = e.basis_gpu_model
),

shape_throughputs as (
    -- One measured row per shape (its throughput may be null), plus an estimate row where one exists.
    select * from measured_rows
    union all by name
    select * from estimate_rows
),

final as (
    select
        w.workload_id, w.kind, w.unit, w.quantity, w.storage_gb, w.egress_gb, w.setup_hours,
        w.utilisation, lower(w.engine) as workload_engine,
        o.offer_option_id, o.offer_id, o.provider, o.gpu_model, o.gpus_per_node, o.billing_model, o.tier,
        o.commitment_term_hours, o.usd_per_gpu_hour, o.usd_per_node_hour, o.price_amount, o.currency,
        o.price_unit, o.price_scope, o.billing_granularity, o.billing_granularity_s, o.min_term_hours,
        o.storage_usd_per_gb_month, o.egress_usd_per_gb, o.licence_usd_per_hour, o.setup_fee_usd,
        o.support_usd_per_month, o.observed_at, o.is_stale, o.stale_reason, o.scope_reason, o.price_band_reason,
        o.warnings as offer_warnings, o.scope_detail,
        o.source_name, o.rocm_version, o.os, o.kernel, o.amdgpu_driver_version, o.fx_rate_date, o.also_seen_in,
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
        o.vendor, o.observed_at_basis
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
)

select * from final

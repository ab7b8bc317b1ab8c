-- One row per workload × offer shape (provider × GPU model × GPUs per node of an offer costed now):
-- the configuration to cost — one node, or as many nodes as the memory-fit minimum needs (for a
-- deadline workload also every larger node count a run measured) — and
-- whether the workload's model fits in it. Everything the cost model decides per shape rather than
-- per offer is decided on these narrow rows, so the workload × offer rows (a million at 200 workloads
-- × 5,000 offers) only look it up: deciding it on the wide rows ran out of the build's 1 GB limit.
with workloads as (
    select workload_id, kind, demand_kind from {{ ref('int_workloads') }}
),

measured_counts as (
    -- Total GPU counts a run of the workload measured (NaN, ±Inf and 0 are no measurement).
    select distinct workload_id, run_provider, gpu_model, gpu_count, node_count
    from {{ ref('int_workload_throughput') }} where isfinite(units_per_hour) and units_per_hour > 0
),

shapes as (
    select distinct provider, gpu_model, gpus_per_node from {{ ref('int_offers_now') }}
),

memory as (
    select * from {{ ref('int_memory_fit') }}
),

sized as (
    select
        w.workload_id, w.kind, w.demand_kind, s.provider, s.gpu_model, s.gpus_per_node,
        m.fits as one_node_fits, m.precision_supported, m.min_gpus,
        -- More nodes only when one node's memory is not enough: as many as the fewest GPUs that fit
        -- need. Only multi-GPU servers scale out; a single-GPU VM that is too small does not fit.
        case when m.fits = false and m.min_gpus > s.gpus_per_node and s.gpus_per_node > 1
            then ((m.min_gpus + s.gpus_per_node - 1) // s.gpus_per_node)::integer else 1 end as node_count
    from workloads as w
    cross join shapes as s
    -- Workloads without a model have no memory_fit rows: not memory-checked, never excluded for it.
    left join memory as m
        on m.workload_id = w.workload_id and m.gpu_model = s.gpu_model and m.gpu_count = s.gpus_per_node
),

memory_sized as (
    select * exclude (demand_kind) from sized
),

deadline_candidates as (
    -- A deadline workload may need more nodes than memory does: every larger node count a run
    -- measured (never extrapolated) is a candidate; int_workload_cost_lines keeps the fewest that
    -- meets the deadline.
    select distinct
        s.workload_id, s.kind, s.provider, s.gpu_model, s.gpus_per_node, s.one_node_fits, s.precision_supported,
        s.min_gpus, (r.gpu_count // s.gpus_per_node)::integer as node_count
    from sized as s
    join measured_counts as r
        on r.workload_id = s.workload_id and r.gpu_model = s.gpu_model
        and r.gpu_count % s.gpus_per_node = 0 and r.gpu_count // s.gpus_per_node > s.node_count
        and (r.node_count is null or r.node_count = r.gpu_count // s.gpus_per_node)
        and (r.run_provider is null or r.run_provider = s.provider)
    where s.demand_kind = 'deadline' and s.gpus_per_node > 1
),

candidates as (
    select * from memory_sized
    union all by name
    select * from deadline_candidates
),

final as (
    select
        s.*,
        s.node_count * s.gpus_per_node as gpu_count,
        case
            when s.node_count = 1 then s.one_node_fits
            -- memory_fit has no row for this count: bytes per GPU only fall as GPUs are added,
            -- so the memory-fit minimum or more fits.
            else coalesce(mn.fits, s.node_count * s.gpus_per_node >= s.min_gpus)
        end as memory_fits
    from candidates as s
    left join memory as mn
        on s.node_count > 1 and mn.workload_id = s.workload_id and mn.gpu_model = s.gpu_model
        and mn.gpu_count = s.node_count * s.gpus_per_node
)

select * from final

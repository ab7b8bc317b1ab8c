-- One row per workload × single-node offer shape that no run measured (and that is not known to miss
-- its SLOs or to be implausibly fast): its throughput estimated from the same workload measured at
-- the same GPU count on the same GPU model elsewhere (factor 1), or — for inference, where decoding
-- is memory-bandwidth bound — on the GPU model with the nearest memory bandwidth, scaled by it.
-- Same columns as int_shape_measured_throughputs, and the basis of the estimate in words.
with shapes as (
    select * exclude (inputs_hash) from {{ ref('int_shape_measured_throughputs') }}
),

measured as (
    -- NaN, ±Inf or zero throughput is no measurement (as in int_shape_measured_throughputs).
    select * from {{ ref('int_workload_throughput') }} where isfinite(units_per_hour) and units_per_hour > 0
),

gpus as (
    select gpu_model, memory_bandwidth_tbps from {{ source('ref', 'gpus') }}
),

estimate_bases as (
    select
        c.workload_id, c.provider, c.gpu_model, c.gpus_per_node,
        t.gpu_model as basis_gpu_model, t.run_provider as basis_provider,
        t.units_per_hour as basis_units_per_hour, t.benchmark_runs, t.benchmark_run_ids,
        (target.memory_bandwidth_tbps / basis.memory_bandwidth_tbps) as scale
    from shapes as c
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
            t.run_provider nulls first,
            -- A run stating its node count (one, here) over one that states none, as measured shapes
            -- do; without it the two tied and the row met first won.
            t.node_count nulls last
    ) = 1
),

final as (
    select
        c.* replace (
            case when e.basis_gpu_model = c.gpu_model then e.basis_units_per_hour
                else e.basis_units_per_hour * e.scale end as units_per_hour,
            e.benchmark_runs as benchmark_runs,
            e.benchmark_run_ids as benchmark_run_ids
        ),
        case when e.basis_gpu_model = c.gpu_model
            then format('{} × {} measured at {} (another provider; same GPU model and count)',
                c.gpu_count, e.basis_gpu_model, coalesce(e.basis_provider, 'any provider'))
            else format('{} × {} measured at {}, scaled by memory bandwidth {} / {} TB/s = {}',
                c.gpu_count, e.basis_gpu_model, coalesce(e.basis_provider, 'any provider'),
                g.memory_bandwidth_tbps, b.memory_bandwidth_tbps, round(e.scale, 4))
        end as estimate_basis
    from shapes as c
    join estimate_bases as e
        on e.workload_id = c.workload_id and e.provider = c.provider and e.gpu_model = c.gpu_model
        and e.gpus_per_node = c.gpus_per_node and c.node_count = 1
    left join gpus as g on g.gpu_model = c.gpu_model
    left join gpus as b on b.gpu_model = e.basis_gpu_model
)

select * from final

-- One row per workload × measured configuration (provider scope, GPU model, GPU count): the median
-- throughput of the matching runs, with the run ids kept as evidence.
with workloads as (
    select * from stg_workloads
),

runs as (
    -- Each run once per unit it measures (its own unit, and requests / tokens from its rates).
    select * from int_benchmark_throughputs where units_per_hour > 0
),

matched as (
    select w.workload_id, r.*
    from workloads as w
    join runs as r
        on r.unit = w.unit
        and (
            r.workload_id = w.benchmark_workload_id
            -- A run that names no workload measures a model: match it on model and precision.
            or (r.workload_id is null and r.model_id = w.model_id
                and r.precision is not distinct from w.precision)
        )
),

final as (
    select
        workload_id,
        -- A run measured at a provider is evidence for that provider's offers only;
        -- a run with no provider speaks for any host with this GPU model and count.
        provider as run_provider,
        gpu_model,
        gpu_count,
        median(units_per_hour) as units_per_hour,
        count(*) as benchmark_runs,
        list(run_id order by run_id) as benchmark_run_ids
    from matched
    group by all
)

select * from final

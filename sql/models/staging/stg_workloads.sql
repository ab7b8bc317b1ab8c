-- One row per declared workload (data/workloads.yaml), as declared: the model name is resolved
-- against models declared by config.json in int_workloads.
with workloads as (
    select * from {{ source('raw', 'workloads') }}
),

final as (
    select
        w.* exclude (line, match_workload_id),
        -- Runs that declare this workload id measure it; by default a workload matches its own id.
        coalesce(w.match_workload_id, w.workload_id) as benchmark_workload_id,
        w.line as declared_on_line
    from workloads as w
)

select * from final

-- One row per declared workload (data/workloads.yaml).
with workloads as (
    select * from raw_workloads
),

final as (
    select
        * exclude (line, match_workload_id),
        -- Runs that declare this workload id measure it; by default a workload matches its own id.
        coalesce(match_workload_id, workload_id) as benchmark_workload_id,
        line as declared_on_line
    from workloads
)

select * from final

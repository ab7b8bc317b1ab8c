-- One row per benchmark run, with its throughput in completed units per hour (whole configuration).
with runs as (
    select * from raw_benchmark_runs
),

final as (
    select
        *,
        completed * 3600.0 / duration_s as units_per_hour
    from runs
)

select * from final

-- One row per benchmark run × unit of completion it measures (its own unit from completed /
-- duration, and requests / output tokens / total tokens from its whole-system rates), in units
-- per hour. Runs an MLPerf summary marks INVALID, and runs that completed nothing, measure nothing.
with runs as (
    select * from {{ ref('int_current_benchmark_runs') }}
    where coalesce(result_valid, true) and coalesce(completed, 1) > 0
),

measured as (
    select run_id, unit, units_per_hour, 'completed / duration_s' as measured_by from runs
    union all
    select run_id, 'requests', request_throughput_per_s * 3600, 'request_throughput_per_s' from runs
    union all
    select run_id, 'output_tokens', output_tokens_per_s * 3600, 'output_tokens_per_s' from runs
    union all
    select run_id, 'total_tokens', total_tokens_per_s * 3600, 'total_tokens_per_s' from runs
),

best as (
    -- Counted completions over the run's duration win over a reported rate of the same unit.
    select *
    from measured
    where units_per_hour is not null
    qualify row_number() over (
        partition by run_id, unit order by measured_by = 'completed / duration_s' desc
    ) = 1
),

final as (
    select
        r.run_id, r.provider, r.gpu_model, r.gpu_count, r.model_id, r.precision, r.engine,
        r.workload_id, b.unit, b.units_per_hour, b.measured_by,
        r.source_name, r.file_sha256
    from best as b
    join runs as r using (run_id)
)

select * from final

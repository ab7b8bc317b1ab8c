-- One row per benchmark run of every landed file (current or not: int_current_benchmark_runs keeps
-- the runs that count), with its throughput in completed units per hour (whole configuration)
-- and its rates per GPU. The adapters already put every value in its canonical unit (ms, s,
-- whole-system per-second rates); the per-GPU rates are derived here, once.
-- Incremental: a build from the published warehouse adds the runs of new files only (macros/incremental_files.sql).
{{ config(materialized='incremental', incremental_strategy='append',
          pre_hook="{{ delete_changed_files(with_state=false) }}") }}
-- depends_on: {{ source('raw', 'file_changes') }}

with runs as (
    {{ raw_rows_of_files(source('raw', 'benchmark_runs')) }}
),

final as (
    select
        *,
        completed * 3600.0 / duration_s as units_per_hour,
        output_tokens_per_s / gpu_count as output_tokens_per_s_per_gpu,
        total_tokens_per_s / gpu_count as total_tokens_per_s_per_gpu,
        total_tokens_per_s - output_tokens_per_s as input_tokens_per_s
    from runs
)

select * from final

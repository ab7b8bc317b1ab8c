-- One row per benchmark run: what a configuration completed, in what unit, over how long.
with runs as (
    select * from stg_benchmark_runs
),

final as (
    select
        run_id, provider, gpu_model, gpu_count, model_id, precision, engine, engine_version,
        rocm_version, workload_id, unit, completed, failed, duration_s, units_per_hour,
        output_tokens_per_s, started_at,
        source_name, source_file, file_sha256, row_number
    from runs
)

select * from final

-- One row per benchmark run: what a configuration completed, in what unit, over how long, and
-- its throughput and latency in canonical units (ms, s, tokens/s for the whole system and per GPU).
with runs as (
    select * from {{ ref('int_current_benchmark_runs') }}
),

plausibility as (
    select * from {{ ref('int_benchmark_plausibility') }}
),

final as (
    select
        run_id, provider, gpu_model, gpu_count, model_id, precision, engine, engine_version,
        rocm_version,
        -- NVIDIA software facts as the run's source states them (MLPerf system JSON: framework /
        -- other_software_stack); null when unstated, never inferred from the GPU.
        metadata_json::json ->> 'cuda_version' as cuda_version,
        metadata_json::json ->> 'gpu_driver_version' as gpu_driver_version,
        workload_id, unit, completed, failed, duration_s, units_per_hour,
        output_tokens_per_s, started_at,
        benchmark_format, scenario, label, result_valid, attempted,
        request_rate_per_s, request_rate_raw, max_concurrency, achieved_concurrency,
        input_len_tokens, output_len_tokens, input_tokens_total, output_tokens_total,
        mean_input_tokens, mean_output_tokens,
        request_throughput_per_s, request_goodput_per_s, total_tokens_per_s, input_tokens_per_s,
        output_tokens_per_s_per_gpu, total_tokens_per_s_per_gpu,
        ttft_mean_ms, ttft_median_ms, ttft_std_ms, ttft_p90_ms, ttft_p95_ms, ttft_p99_ms,
        tpot_mean_ms, tpot_median_ms, tpot_std_ms, tpot_p90_ms, tpot_p95_ms, tpot_p99_ms,
        itl_mean_ms, itl_median_ms, itl_std_ms, itl_p90_ms, itl_p95_ms, itl_p99_ms,
        e2el_mean_ms, e2el_median_ms, e2el_std_ms, e2el_p90_ms, e2el_p95_ms, e2el_p99_ms,
        latency_stats_ms_json, metadata_json, request_rows,
        source_name, source_file, file_sha256, row_number,
        node_count,
        -- Against the best published result for the GPU, model and precision (PERF_IMPLAUSIBLE).
        p.published_best_tokens_per_s_per_gpu, p.perf_vs_published_ratio, p.is_perf_implausible,
        p.perf_confirmed, p.perf_detail
    from runs
    left join plausibility as p using (run_id)
)

select * from final

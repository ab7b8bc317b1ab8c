-- One row per benchmark run, with its throughput in completed units per hour (whole configuration)
-- and its rates per GPU. The adapters already put every value in its canonical unit (ms, s,
-- whole-system per-second rates); the per-GPU rates are derived here, once.
with runs as (
    -- Runs of superseded and withdrawn files stop counting (docs/inputs.md); files with no recorded
    -- version (none in a hand-built warehouse) count.
    select r.*
    from {{ source('raw', 'benchmark_runs') }} as r
    left join {{ ref('stg_file_states') }} as f
        on f.source_name = r.source_name and f.file_sha256 = r.file_sha256
    where coalesce(f.state, 'current') = 'current'
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

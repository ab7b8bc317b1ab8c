-- One row per request of a benchmark run that kept per-request detail (vLLM / SGLang detailed
-- output); run_id joins benchmark_runs. Read straight from the raw table: it is the high-volume
-- table, and a staging copy would double its size for no change.
-- Incremental (macros/incremental_files.sql): new files' requests are added, and the requests of a
-- file whose state changed are deleted and, if it is current now, added again.
{{ config(materialized='incremental', incremental_strategy='append',
          pre_hook="{{ delete_changed_files(with_state=true) }}") }}
-- depends_on: {{ source('raw', 'file_changes') }}

with requests as (
    -- Only requests of files whose runs count (int_current_benchmark_runs): superseded versions leave.
    select r.*
    from ({{ raw_rows_of_files(source('raw', 'benchmark_requests'), ['added', 'state']) }}) as r
    left join {{ ref('int_file_states') }} as f
        on f.source_name = r.source_name and f.file_sha256 = r.file_sha256
    where coalesce(f.state, 'current') = 'current'
),

final as (
    select
        run_id, request_index, input_tokens, output_tokens, ttft_ms, latency_ms, error, source_name,
        succeeded, tpot_ms, itl_count, itl_mean_ms, itl_max_ms,
        source_file, file_sha256, row_number as run_row_number
    from requests
)

select * from final

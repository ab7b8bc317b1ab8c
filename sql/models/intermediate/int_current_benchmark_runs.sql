-- One row per benchmark run that counts: runs of superseded and withdrawn files stop counting
-- (docs/inputs.md); files with no recorded version (none in a hand-built warehouse) count.
with runs as (
    select * from {{ ref('stg_benchmark_runs') }}
),

file_states as (
    select * from {{ ref('int_file_states') }}
),

final as (
    select r.*
    from runs as r
    left join file_states as f
        on f.source_name = r.source_name and f.file_sha256 = r.file_sha256
    where coalesce(f.state, 'current') = 'current'
)

select * from final

-- One row per input file (by content hash) and what became of it: loaded, rejected or duplicate.
with manifest as (
    select * from {{ source('raw', 'ingest_manifest') }}
),

final as (
    select
        file_sha256, source_name, format, original_path, status, reason,
        rows_in, rows_accepted, rows_quarantined,
        first_seen_at::timestamptz as first_seen_at
    from manifest
)

select * from final

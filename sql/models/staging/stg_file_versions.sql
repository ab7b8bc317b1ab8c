-- One row per version of an input path: a run of consecutive reads of one content at one path of
-- one source (flows/ingest/versions.py). current = what the path holds now; superseded = replaced
-- at its path by superseded_by; withdrawn = the path is no longer there (docs/inputs.md).
with versions as (
    select * from {{ source('raw', 'file_versions') }}
),

final as (
    select
        source_name, original_path, version, file_sha256, state, superseded_by,
        first_seen_at::timestamptz as first_seen_at,
        last_seen_at::timestamptz as last_seen_at,
        reads
    from versions
)

select * from final

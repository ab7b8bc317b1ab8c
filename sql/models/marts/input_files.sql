-- One row per version of each declared input file (a content at a path over a run of reads), and
-- per failed fetch: its state (current / superseded / withdrawn / rejected), rows in / accepted /
-- quarantined, first and last seen. `provider-eval inputs` prints it (docs/inputs.md).
with versions as (
    select * from {{ ref('stg_file_versions') }}
),

manifest as (
    -- One outcome per landed file; 'duplicate' rows repeat a loaded file's hash.
    select * from {{ source('raw', 'ingest_manifest') }} where status != 'duplicate'
),

landed as (
    select
        v.source_name, v.original_path, v.version, v.file_sha256,
        case when m.status = 'rejected' then 'rejected' else v.state end as state,
        v.superseded_by, m.format, m.status, m.reason,
        m.rows_in, m.rows_accepted, m.rows_quarantined,
        v.first_seen_at, v.last_seen_at, v.reads
    from versions as v
    left join manifest as m
        on m.source_name = v.source_name and m.file_sha256 = v.file_sha256
),

failed_fetches as (
    -- A fetch that failed lands nothing: its manifest row is its only trace.
    select
        m.source_name, m.original_path, null::bigint as version, m.file_sha256, 'rejected' as state,
        null as superseded_by, m.format, m.status, m.reason,
        m.rows_in, m.rows_accepted, m.rows_quarantined,
        m.first_seen_at::timestamptz as first_seen_at, m.first_seen_at::timestamptz as last_seen_at,
        0::bigint as reads
    from manifest as m
    where m.status = 'rejected'
        and not exists (
            select 1 from versions as v where v.source_name = m.source_name and v.file_sha256 = m.file_sha256)
),

final as (
    select * from landed
    union all by name
    select * from failed_fetches
)

select
    source_name, original_path, version, file_sha256, state, superseded_by, format, status, reason,
    rows_in, rows_accepted, rows_quarantined, first_seen_at, last_seen_at, reads
from final

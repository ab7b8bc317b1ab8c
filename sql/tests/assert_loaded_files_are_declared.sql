-- Every loaded file belongs to a declared source's landed files (it has a version in
-- stg_file_versions): rows of an undeclared source, or of a file staged under another file's
-- cache key, never publish (#23).
select m.source_name, m.original_path, m.file_sha256
from {{ source('raw', 'ingest_manifest') }} as m
where m.status = 'loaded'
    and not exists (
        select 1 from {{ ref('stg_file_versions') }} as v
        where v.source_name = m.source_name and v.file_sha256 = m.file_sha256)

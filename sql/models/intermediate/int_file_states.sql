-- One row per landed file (source × content hash): its lifecycle state across the paths that held
-- it. current if a path holds it now; else superseded if one of its paths now holds another
-- version; else withdrawn. superseded_by: the content that replaced its latest version.
with versions as (
    select * from {{ ref('stg_file_versions') }}
),

paths as (
    -- Whether each path is still there (its latest version is current).
    select source_name, original_path, bool_or(state = 'current') as is_present
    from versions
    group by all
),

final as (
    select
        v.source_name, v.file_sha256,
        case
            when bool_or(v.state = 'current') then 'current'
            when bool_or(p.is_present) then 'superseded'
            else 'withdrawn'
        end as state,
        -- The latest version's successor; of two paths whose versions were last seen in the same
        -- read, the larger path: never the order the versions were stored in.
        case when not bool_or(v.state = 'current') then arg_max(v.superseded_by, {
            'last_seen_at': v.last_seen_at, 'original_path': v.original_path, 'version': v.version}) end
            as superseded_by,
        min(v.first_seen_at) as first_seen_at,
        max(v.last_seen_at) as last_seen_at
    from versions as v
    join paths as p using (source_name, original_path)
    group by v.source_name, v.file_sha256
)

select * from final

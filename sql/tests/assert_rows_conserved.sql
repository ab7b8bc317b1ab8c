-- Every input row of every loaded file is either accepted or quarantined: none lost, none invented.
with manifest as (
    select * from {{ ref('ingest_manifest') }} where status = 'loaded'
),

accepted as (
    -- Every accepted quote row (offer_history keeps one row per distinct content), and every loaded
    -- run (benchmark_runs keeps only current files' runs; superseded versions stay loaded).
    select file_sha256, source_name, count(*) as n from {{ ref('stg_quote_observations') }} group by all
    union all
    select file_sha256, source_name, count(*) from {{ source('raw', 'benchmark_runs') }} group by all
    union all
    select file_sha256, source_name, count(*) from {{ ref('stg_model_configs') }} group by all
    union all
    select file_sha256, source_name, count(*) from {{ source('raw', 'hardware_validations') }} group by all
),

quarantined as (
    select file_sha256, source_name, count(*) as n from {{ ref('quarantine') }} group by all
)

select m.source_name, m.original_path, m.rows_in, m.rows_accepted, m.rows_quarantined,
       coalesce(a.n, 0) as accepted_in_tables, coalesce(q.n, 0) as quarantined_in_table
from manifest as m
left join accepted as a using (file_sha256, source_name)
left join quarantined as q using (file_sha256, source_name)
where m.rows_in != m.rows_accepted + m.rows_quarantined
   or coalesce(a.n, 0) != m.rows_accepted
   or coalesce(q.n, 0) != m.rows_quarantined

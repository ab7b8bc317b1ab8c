-- Every per-request row belongs to a published run of the same file, and each run's request_rows
-- matches the requests published for it.
with requests as (
    select source_name, file_sha256, run_id, count(*) as n from {{ ref('benchmark_requests') }} group by all
),

runs as (
    select source_name, file_sha256, run_id, request_rows from {{ ref('benchmark_runs') }}
)

select q.source_name, q.file_sha256, q.run_id, q.n as requests, r.request_rows
from requests as q
left join runs as r using (source_name, file_sha256, run_id)
where r.run_id is null or r.request_rows is distinct from q.n
union all
select r.source_name, r.file_sha256, r.run_id, 0, r.request_rows
from runs as r
anti join requests as q using (source_name, file_sha256, run_id)
where r.request_rows > 0

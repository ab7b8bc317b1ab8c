-- Estimated throughput is never mixed into rankings: every ranked row is measured.
select workload_id, rank, offer_id, throughput_source
from {{ ref('rankings') }}
where throughput_source != 'measured'

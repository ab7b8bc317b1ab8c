-- Ranks per workload run 1..n with no gaps or repeats.
select workload_id, count(*) as rows, max(rank) as max_rank, count(distinct rank) as distinct_ranks
from {{ ref('rankings') }}
group by workload_id
having max(rank) != count(*) or count(distinct rank) != count(*)

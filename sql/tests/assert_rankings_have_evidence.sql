-- Every ranked row names the benchmark runs its throughput came from, and is not stale.
select r.workload_id, r.offer_id, r.benchmark_run_ids
from {{ ref('rankings') }} as r
join {{ ref('workload_costs') }} as c using (workload_id, offer_id, provider, billing_model, source_name)
-- A billing option is also its tier and commitment term (null when the quote has none).
where r.tier is not distinct from c.tier
    and r.commitment_term_hours is not distinct from c.commitment_term_hours
    and (r.benchmark_run_ids is null or len(r.benchmark_run_ids) = 0 or c.is_stale)

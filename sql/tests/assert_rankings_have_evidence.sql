-- Every ranked row names the benchmark runs its throughput came from, and is not stale.
-- Two narrow reads, not one join with an OR across both tables: a row without evidence needs no
-- join, and only stale costs are joined (rarely any; the OR joined every ranked row: 0.7 s vs
-- 0.06 s at SCALE=default).
select r.workload_id, r.offer_id, r.benchmark_run_ids
from {{ ref('rankings') }} as r
where r.benchmark_run_ids is null or len(r.benchmark_run_ids) = 0

union all

select r.workload_id, r.offer_id, r.benchmark_run_ids
from {{ ref('rankings') }} as r
join (select * from {{ ref('workload_costs') }} where is_stale) as c
    using (workload_id, offer_id, provider, billing_model, source_name)
-- A billing option is also its tier and commitment term (null when the quote has none).
where r.tier is not distinct from c.tier
    and r.commitment_term_hours is not distinct from c.commitment_term_hours

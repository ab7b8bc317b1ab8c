-- A ranked cost must be a real, positive amount (no null, NaN, Inf, zero or negative).
select workload_id, offer_id, cost_per_unit_usd, total_cost_usd, hours_billed
from {{ ref('rankings') }}
where cost_per_unit_usd is null or cost_per_unit_usd <= 0
   or total_cost_usd is null or total_cost_usd <= 0
   or hours_billed is null or hours_billed <= 0
   or not isfinite(cost_per_unit_usd::double)

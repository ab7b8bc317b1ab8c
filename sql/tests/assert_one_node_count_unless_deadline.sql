-- Only a deadline workload's configuration has more than one node count to choose from
-- (int_shape_configurations' deadline_candidates): int_workload_cost_lines passes every other
-- configuration through without choosing, so a second node count there would be costed twice.
select workload_id, offer_option_id, throughput_source, count(distinct node_count) as node_counts
from {{ ref('int_workload_configurations') }}
where demand_kind is distinct from 'deadline'
group by all
having count(distinct node_count) > 1

-- Every costed row's total is exactly the sum of its lines, and billing never bills less than needed.
select workload_id, offer_id, billing_model, throughput_source, total_cost_usd, hours_needed, hours_billed
from {{ ref('workload_costs') }}
where total_cost_usd is not null and (
    total_cost_usd != compute_cost_usd + storage_cost_usd + egress_cost_usd + licence_cost_usd
        + setup_cost_usd + support_cost_usd
    or hours_billed < hours_needed
)

-- One row per workload × configuration whose throughput is estimated (no matching run; see
-- workload_costs.estimate_basis), ranked among estimates only (1 = cheapest). Lower confidence:
-- never mixed into rankings.
with ranked as (
    {{ ranked_by_cost_per_unit('estimated') }}
),

final as (
    select * exclude (status)
    from ranked
)

select * from final

-- One row per workload × feasible configuration with measured throughput, ranked by cost per
-- completed unit (1 = cheapest), with the evidence behind the number. Estimates: estimate_rankings.
with ranked as (
    {{ ranked_by_cost_per_unit('ranked') }}
),

final as (
    select * exclude (status, estimate_basis)
    from ranked
)

select * from final

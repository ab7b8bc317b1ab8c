-- One row per workload × feasible configuration with measured throughput, ranked by cost per
-- completed unit (1 = cheapest), with the evidence behind the number. Estimates: estimate_rankings.
with ranked as (
    select * from {{ ref('int_cost_ranks') }} where status = 'ranked'
),

final as (
    select * exclude (offer_option_id, status, estimate_basis)
    from ranked
)

select * from final

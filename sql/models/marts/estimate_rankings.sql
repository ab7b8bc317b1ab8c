-- One row per workload × configuration whose throughput is estimated (no matching run; see
-- workload_costs.estimate_basis), ranked among estimates only (1 = cheapest). Lower confidence:
-- never mixed into rankings.
with estimated as (
    select * from {{ ref('int_cost_ranks') }} where status = 'estimated'
),

final as (
    select * exclude (offer_option_id, status)
    from estimated
)

select * from final

-- One row per market price with at least one peer: the median absolute deviation (log space) of the
-- other market prices around its leave-one-out median (int_offer_market_medians), from ranks.
-- Ephemeral: a step of int_offer_market_peers (inlined there as a CTE); a table of its own would cost a
-- dbt node per build for a few rows.
{{ config(materialized='ephemeral') }}

with market_medians as (
    select * from {{ ref('int_offer_market_medians') }}
),

deviations as (
    -- MAD around each leave-one-out median: a group has at most three distinct ones (the left-out
    -- value is below, at or above the middle), so every value's deviation from each is ranked.
    select
        c.gpu_model, c.billing_model, c.centre, r.option_id, abs(r.ln_usd - c.centre) as dev,
        row_number() over (partition by c.gpu_model, c.billing_model, c.centre
            order by abs(r.ln_usd - c.centre), r.option_id) as rk
    from (select distinct gpu_model, billing_model, market_median_ln_usd as centre from market_medians) as c
    join {{ ref('int_offer_market_ranks') }} as r using (gpu_model, billing_model)
)

select
    m.option_id,
    list_median(case when q_lo = q_hi then [lo.dev] else [lo.dev, hi.dev] end) as market_mad_ln_usd
from (
    select mm.*, own.rk as own_rk,
        mm.j_lo + (own.rk <= mm.j_lo)::integer as q_lo, mm.j_hi + (own.rk <= mm.j_hi)::integer as q_hi
    from market_medians as mm
    join deviations as own
        on own.option_id = mm.option_id and own.centre = mm.market_median_ln_usd
) as m
join deviations as lo
    on lo.gpu_model = m.gpu_model and lo.billing_model = m.billing_model
    and lo.centre = m.market_median_ln_usd and lo.rk = m.q_lo
join deviations as hi
    on hi.gpu_model = m.gpu_model and hi.billing_model = m.billing_model
    and hi.centre = m.market_median_ln_usd and hi.rk = m.q_hi

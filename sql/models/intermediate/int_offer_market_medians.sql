-- One row per market price with at least one peer: the median of the other market prices of its GPU
-- model and billing model (leave-one-out), in dollars and in log space, computed from ranks
-- (O(n log n)): a self-join of every offer with every peer grew with the square of the offers per
-- GPU model (5,000 ran out of memory).
with market_ranked as (
    select * from {{ ref('int_offer_market_ranks') }}
),

market_positions as (
    -- m = n - 1 peers; the j-th peer is the group's j-th value, or the (j + 1)-th from the own rank on.
    select *, j_lo + (rk <= j_lo)::integer as q_lo, j_hi + (rk <= j_hi)::integer as q_hi
    from (select *, n - 1 as m, (n - 2) // 2 + 1 as j_lo, (n - 1) // 2 + 1 as j_hi from market_ranked)
    where m > 0
)

select
    p.option_id, p.gpu_model, p.billing_model, p.m as market_peers, p.ln_usd, p.j_lo, p.j_hi,
    list_median(case when p.q_lo = p.q_hi then [lo.ln_usd] else [lo.ln_usd, hi.ln_usd] end)
        as market_median_ln_usd,
    list_median(case when p.q_lo = p.q_hi then [lo.usd] else [lo.usd, hi.usd] end) as market_median_usd
from market_positions as p
join market_ranked as lo
    on lo.gpu_model = p.gpu_model and lo.billing_model = p.billing_model and lo.rk = p.q_lo
join market_ranked as hi
    on hi.gpu_model = p.gpu_model and hi.billing_model = p.billing_model and hi.rk = p.q_hi

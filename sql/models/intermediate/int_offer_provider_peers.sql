-- One row per current offer (provider × GPU model × billing model × offer_id, all its sources, tiers
-- and terms) × peer set: the median $/GPU-hour of the provider's other offers of that GPU model and
-- billing model — single-GPU ones ('single': their scope cannot be wrong) or all ('any'); no row
-- where the provider has no other such offer.
-- A median with the offer's own values left out, computed from ranks (O(n log n)): a self-join of
-- every offer with every peer grew with the square of the offers per GPU model.
-- Ephemeral (inlined into int_offer_market_peers, its one reader): one dbt node fewer per build.
{{ config(materialized='ephemeral') }}
with latest as (
    select provider, gpu_model, billing_model, offer_id, gpus_per_node, usd_per_gpu_hour
    from {{ ref('int_quote_latest') }}
),

provider_values as (
    -- The values each provider-peer median runs over: single-GPU offers (their scope cannot be
    -- wrong) and every offer; a block is one offer_id (all its sources, tiers and terms).
    select provider, gpu_model, billing_model, offer_id, 'single' as peer_set, usd_per_gpu_hour as x
    from latest where usd_per_gpu_hour is not null and gpus_per_node = 1
    union all
    select provider, gpu_model, billing_model, offer_id, 'any', usd_per_gpu_hour
    from latest where usd_per_gpu_hour is not null
),

provider_ranked as (
    -- rk: the value's rank in its group; gap: how many values outside its own block rank below it.
    select
        *,
        count(*) over (partition by provider, gpu_model, billing_model, peer_set) as n,
        row_number() over (partition by provider, gpu_model, billing_model, peer_set order by x, offer_id) as rk
    from provider_values
),

provider_gaps as (
    select
        *,
        rk - row_number() over (partition by provider, gpu_model, billing_model, peer_set, offer_id
            order by rk) as gap
    from provider_ranked
),

provider_blocks as (
    -- Every offer_id of every group (with or without values of its own), its group size n and block
    -- size s: the m = n - s values left are its peers.
    select
        b.provider, b.gpu_model, b.billing_model, b.offer_id, sets.peer_set,
        coalesce(any_value(g.n), 0) as n,
        list(p.gap) filter (where p.gap is not null) as gaps
    from (select distinct provider, gpu_model, billing_model, offer_id from latest) as b
    cross join (values ('single'), ('any')) as sets(peer_set)
    left join (select distinct provider, gpu_model, billing_model, peer_set, n from provider_ranked) as g
        using (provider, gpu_model, billing_model, peer_set)
    left join provider_gaps as p using (provider, gpu_model, billing_model, peer_set, offer_id)
    group by all
),

provider_positions as (
    -- The median of the m values left takes their j_lo-th and j_hi-th (1-based, as quantile_cont
    -- interpolates); the j-th value left is the group's (j + #block values ranked before it)-th.
    select
        *,
        j_lo + len(list_filter(coalesce(gaps, []), lambda g: g < j_lo)) as q_lo,
        j_hi + len(list_filter(coalesce(gaps, []), lambda g: g < j_hi)) as q_hi
    from (
        select *, n - len(coalesce(gaps, [])) as m,
            (n - len(coalesce(gaps, [])) - 1) // 2 + 1 as j_lo,
            (n - len(coalesce(gaps, []))) // 2 + 1 as j_hi
        from provider_blocks
    )
    where m > 0
),

final as (
    select
        p.provider, p.gpu_model, p.billing_model, p.offer_id, p.peer_set,
        list_median(case when p.q_lo = p.q_hi then [lo.x] else [lo.x, hi.x] end) as median_usd
    from provider_positions as p
    join provider_ranked as lo
        on lo.provider = p.provider and lo.gpu_model = p.gpu_model and lo.billing_model = p.billing_model
        and lo.peer_set = p.peer_set and lo.rk = p.q_lo
    join provider_ranked as hi
        on hi.provider = p.provider and hi.gpu_model = p.gpu_model and hi.billing_model = p.billing_model
        and hi.peer_set = p.peer_set and hi.rk = p.q_hi
)

select * from final

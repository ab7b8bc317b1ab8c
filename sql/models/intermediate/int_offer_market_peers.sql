-- One row per current offer × billing option (int_quote_latest): what its peers charge per GPU-hour.
-- provider peers: the provider's other offers (another offer_id) of the same GPU model and billing
-- model, single-GPU ones and all (int_offer_provider_peers); market peers: every other offer's
-- current price (any provider) of the same GPU model and billing model, leave-one-out, in log space
-- (median and 1.4826 × MAD, data/reference/conventions.csv). An
-- offer listed by several sources is one market peer (its latest observation, as the cost model
-- picks it), and a hypothetical price (notes starting "hypothetical", seed 000's example) is no
-- market price: it is neither a peer nor judged against the market (docs/cost-model.md).
-- Each is a median with some rows left out, computed from ranks (O(n log n)): a self-join of every
-- offer with every peer grew with the square of the offers per GPU model (5,000 ran out of memory).
with latest as (
    select
        *,
        row_number() over (order by source_name, provider, offer_id, billing_model, tier,
            commitment_term_hours) as option_id,
        -- The same offer in every source that lists it: the cross-source key the cost model uses.
        cross_source_option_id as market_key,
        coalesce(regexp_matches(notes, '^\s*hypothetical\b', 'i'), false) as is_hypothetical
    from {{ ref('int_quote_latest') }}
),

provider_medians as (
    select * from {{ ref('int_offer_provider_peers') }}
),

market_candidates as (
    select * from latest where usd_per_gpu_hour > 0 and not is_hypothetical
),

market_values as (
    -- The market's prices, one per offer rather than per source: for each offer key, the offers of
    -- the source the cost model costs it from (latest observation, a dated one first; ties: source).
    select c.*
    from market_candidates as c
    join (
        select market_key, source_name from market_candidates
        qualify row_number() over (partition by market_key
            order by observed_at_basis != 'landed_at' desc, observed_at desc, source_name) = 1
    ) as w using (market_key, source_name)
),

own_values as (
    -- Each judged option leaves out its own offer: itself, or (listed by a source that lost the key)
    -- the winning source's offer of that key with the same offer id, else its first by offer id.
    -- Equi-joins only: one key can hold 50,000 offers of one marketplace.
    select option_id, option_id as value_id from market_values
    union all
    select c.option_id, coalesce(same.option_id, first.option_id)
    from market_candidates as c
    left join market_values as own on own.option_id = c.option_id
    left join market_values as same on same.market_key = c.market_key and same.offer_id = c.offer_id
    left join (
        select market_key, arg_min(option_id, (offer_id, option_id)) as option_id from market_values group by all
    ) as first on first.market_key = c.market_key
    where own.option_id is null
),

market_ranked as (
    -- Prices > 0 ranked within their GPU model and billing model; each leaves out its own offer only.
    select
        option_id, gpu_model, billing_model, usd_per_gpu_hour::double as usd,
        ln(usd_per_gpu_hour::double) as ln_usd,
        count(*) over (partition by gpu_model, billing_model) as n,
        row_number() over (partition by gpu_model, billing_model order by usd_per_gpu_hour) as rk
    from market_values
),

market_positions as (
    -- m = n - 1 peers; the j-th peer is the group's j-th value, or the (j + 1)-th from the own rank on.
    select *, j_lo + (rk <= j_lo)::integer as q_lo, j_hi + (rk <= j_hi)::integer as q_hi
    from (select *, n - 1 as m, (n - 2) // 2 + 1 as j_lo, (n - 1) // 2 + 1 as j_hi from market_ranked)
    where m > 0
),

market_medians as (
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
),

deviations as (
    -- MAD around each leave-one-out median: a group has at most three distinct ones (the left-out
    -- value is below, at or above the middle), so every value's deviation from each is ranked.
    select
        c.gpu_model, c.billing_model, c.centre, r.option_id, abs(r.ln_usd - c.centre) as dev,
        row_number() over (partition by c.gpu_model, c.billing_model, c.centre
            order by abs(r.ln_usd - c.centre)) as rk
    from (select distinct gpu_model, billing_model, market_median_ln_usd as centre from market_medians) as c
    join market_ranked as r using (gpu_model, billing_model)
),

market_mads as (
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
),

final as (
    select
        l.offer_option_id, l.source_name, l.provider, l.offer_id, l.billing_model, l.tier, l.commitment_term_hours,
        ps.median_usd as single_gpu_peer_usd,
        pa.median_usd as any_peer_usd,
        mm.market_peers,
        mm.market_median_ln_usd,
        conv.mad_to_sigma * md.market_mad_ln_usd as market_sd_ln_usd,
        mm.market_median_usd
    from latest as l
    left join provider_medians as ps
        on ps.provider = l.provider and ps.gpu_model = l.gpu_model and ps.billing_model = l.billing_model
        and ps.offer_id = l.offer_id and ps.peer_set = 'single'
    left join provider_medians as pa
        on pa.provider = l.provider and pa.gpu_model = l.gpu_model and pa.billing_model = l.billing_model
        and pa.offer_id = l.offer_id and pa.peer_set = 'any'
    -- Judged against the market: real prices > 0 only, each against every other offer.
    left join own_values as ov on ov.option_id = l.option_id
    left join market_medians as mm on mm.option_id = ov.value_id
    left join market_mads as md on md.option_id = ov.value_id
    cross join {{ ref('stg_conventions') }} as conv
)

select * from final

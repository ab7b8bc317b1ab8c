-- One row per current offer × billing option (int_quote_latest): what its peers charge per GPU-hour.
-- provider peers: the provider's other offers (another offer_id) of the same GPU model and billing
-- model, single-GPU ones and all (int_offer_provider_peers); market peers: every other offer's
-- current price (any provider) of the same GPU model and billing model, leave-one-out, in log space
-- (median and 1.4826 × MAD, data/reference/conventions.csv; int_offer_market_medians and _mads). An
-- offer listed by several sources is one market peer (its latest observation, as the cost model
-- picks it: int_offer_market_values), and a hypothetical price (notes starting "hypothetical", seed
-- 000's example) is no market price: it is neither a peer nor judged against the market
-- (docs/cost-model.md).
with latest as (
    select * from {{ ref('int_offer_market_options') }}
),

provider_medians as (
    select * from {{ ref('int_offer_provider_peers') }}
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
    -- Judged against the market: real prices > 0 only, each against every other offer (its own left out).
    left join {{ ref('int_offer_market_own_values') }} as ov on ov.option_id = l.option_id
    left join {{ ref('int_offer_market_medians') }} as mm on mm.option_id = ov.value_id
    left join {{ ref('int_offer_market_mads') }} as md on md.option_id = ov.value_id
    cross join {{ ref('stg_conventions') }} as conv
)

select * from final

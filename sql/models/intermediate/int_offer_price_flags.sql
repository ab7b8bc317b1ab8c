-- One row per current offer option (int_quote_latest): whether its price looks like the wrong scope
-- (a node price recorded per GPU, or the reverse), is an outlier in its market, or lies outside the
-- GPU model's plausible band, each with its reason code and the sentence offers shows.
-- Ephemeral (inlined into int_offers, its one reader): one dbt node fewer per build.
{{ config(materialized='ephemeral') }}
with latest as (
    select offer_option_id, gpu_model, gpus_per_node, billing_model, price_scope, usd_per_gpu_hour
    from {{ ref('int_quote_latest') }}
),

peers as (
    -- What the provider's other offers and the market charge (int_offer_market_peers: leave-one-out
    -- medians; single-GPU offers anchor the provider's price because their scope cannot be wrong).
    select * from {{ ref('int_offer_market_peers') }}
),

price_bands as (
    -- Plausible $/GPU-hour per GPU model (data/reference/price_bands.csv); '*' covers the others.
    select gpu_model, min_usd_per_gpu_hour, max_usd_per_gpu_hour from {{ source('ref', 'price_bands') }}
),

compared as (
    select
        l.*,
        l.usd_per_gpu_hour / nullif(pp.single_gpu_peer_usd, 0) as single_ratio,
        l.usd_per_gpu_hour / nullif(pp.any_peer_usd, 0) as any_ratio,
        -- In log space: prices spread by factors (a scope slip is × gpus_per_node), not by dollars.
        -- Robust centre and spread (median, 1.4826 × MAD ≈ σ for normal data): one wild peer price
        -- cannot widen the spread enough to hide another.
        pp.market_peers, pp.market_median_usd, pp.market_sd_ln_usd,
        (ln(l.usd_per_gpu_hour::double) - pp.market_median_ln_usd) / nullif(pp.market_sd_ln_usd, 0) as market_z,
        conv.*
    from latest as l
    left join peers as pp using (offer_option_id)
    cross join {{ ref('stg_conventions') }} as conv
),

flagged as (
    select
        offer_option_id, gpu_model, gpus_per_node, billing_model, price_scope, usd_per_gpu_hour,
        single_ratio, any_ratio, market_peers, market_median_usd, market_z, mad_to_sigma,
        -- Heuristic, flagged not fixed: a per-GPU price ≈ gpus_per_node × its peers is a node price
        -- recorded per GPU; a per-node price ≈ peers / gpus_per_node is a GPU price recorded per node.
        coalesce(gpus_per_node > 1 and (
            (price_scope = 'per_gpu' and coalesce(single_ratio, any_ratio)
                between scope_ratio_low * gpus_per_node and scope_ratio_high * gpus_per_node)
            or (price_scope = 'per_node' and single_ratio
                between scope_ratio_low / gpus_per_node and scope_ratio_high / gpus_per_node)
        ), false) as is_scope_ratio_suspect,
        -- More than 3 robust σ (of log price) from at least 5 peer prices (same GPU model and billing
        -- model) AND at least twice or at most half their median: σ of a tight cluster (five offers
        -- at 1.99) is so small that an ordinary dearer provider (3.45) would be 3σ away, while a
        -- scope slip is a factor of gpus_per_node.
        coalesce(market_peers >= price_outlier_min_peers
            and (abs(market_z) > price_outlier_robust_sigmas
                or (market_sd_ln_usd = 0 and usd_per_gpu_hour != market_median_usd))
            and (usd_per_gpu_hour >= price_outlier_min_factor * market_median_usd
                or usd_per_gpu_hour <= market_median_usd / price_outlier_min_factor),
            false) as is_price_outlier,
        -- A price the node's GPU count (× or ÷) away from the market median of ≥ 5 peers is a scope
        -- slip: not ranked. The median, not σ, decides: one wild peer cannot mask another. Any other
        -- outlier may be a real (dear or cheap) price: a PRICE_OUTLIER warning only.
        coalesce(market_peers >= price_outlier_min_peers and gpus_per_node > 1 and (
            usd_per_gpu_hour / market_median_usd
                between scope_ratio_low * gpus_per_node and scope_ratio_high * gpus_per_node
            or usd_per_gpu_hour / market_median_usd
                between scope_ratio_low / gpus_per_node and scope_ratio_high / gpus_per_node
        ), false) as is_market_scope_slip
    from compared
),

banded as (
    select
        f.*,
        coalesce(own.gpu_model, 'any-GPU') as band_gpu_model,
        coalesce(own.min_usd_per_gpu_hour, other.min_usd_per_gpu_hour) as band_min_usd,
        coalesce(own.max_usd_per_gpu_hour, other.max_usd_per_gpu_hour) as band_max_usd,
        -- Outside the GPU model's plausible band (and not already explained as a scope slip).
        coalesce(not (f.is_scope_ratio_suspect or f.is_market_scope_slip) and f.usd_per_gpu_hour not between
            coalesce(own.min_usd_per_gpu_hour, other.min_usd_per_gpu_hour)
            and coalesce(own.max_usd_per_gpu_hour, other.max_usd_per_gpu_hour), false) as is_price_implausible
    from flagged as f
    left join price_bands as own on own.gpu_model = f.gpu_model
    left join price_bands as other on other.gpu_model = '*'
),

final as (
    select
        offer_option_id,
        is_scope_ratio_suspect or is_market_scope_slip as is_scope_suspect,
        case when is_scope_ratio_suspect or is_market_scope_slip then 'SCOPE_SUSPECT' end as scope_reason,
        case
            when is_scope_ratio_suspect then format(
                '{} price {} $/GPU-h is about {} × the provider''s other {} {} offers ({} GPUs per node)',
                price_scope, round(usd_per_gpu_hour, 4), round(coalesce(single_ratio, any_ratio), 2),
                gpu_model, billing_model, gpus_per_node)
            when is_market_scope_slip then format(
                '{} price {} $/GPU-h is about {} × the median ({}) of {} other {} {} prices ({} GPUs per node)',
                price_scope, round(usd_per_gpu_hour, 4), round(usd_per_gpu_hour / market_median_usd, 2),
                round(market_median_usd, 4), market_peers, gpu_model, billing_model, gpus_per_node)
            when is_price_outlier then format(
                '{} $/GPU-h is {} robust σ (log price, {} × MAD) from {} other {} {} prices (median {})',
                round(usd_per_gpu_hour, 4), coalesce(round(market_z, 1)::varchar, 'infinitely many'), mad_to_sigma,
                market_peers, gpu_model, billing_model, round(market_median_usd, 4))
        end as scope_detail,
        -- An outlier that is not a scope slip may be a real price: a warning, never an exclusion.
        is_price_outlier and not is_market_scope_slip and not is_scope_ratio_suspect as is_price_outlier_warning,
        -- One vendor's impossible price is excluded from ranking with its reason; it never blocks a publish.
        case when is_price_implausible then 'PRICE_IMPLAUSIBLE' end as price_band_reason,
        case when is_price_implausible then format(
            '{} $/GPU-h is outside the plausible {} band {} to {} $/GPU-h (data/reference/price_bands.csv)',
            round(usd_per_gpu_hour, 4), band_gpu_model, band_min_usd, band_max_usd) end as price_band_detail
    from banded
)

select * from final

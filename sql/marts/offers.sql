-- One row per offer × billing option (billing model, tier, commitment term) as it stands now: the
-- latest observation of each, flagged when stale or when its price scope looks mistaken.
with observations as (
    select * from stg_quote_observations
),

latest as (
    select *
    from observations
    qualify row_number() over (
        partition by source_name, provider, offer_id, billing_model, tier, commitment_term_hours
        order by observed_at desc, file_sha256, row_number
    ) = 1
),

peer_prices as (
    -- The provider's other offers of the same GPU model and billing model: what a GPU-hour costs
    -- there. Single-GPU offers are the anchor because their scope cannot be wrong.
    select
        o.source_name, o.provider, o.offer_id, o.billing_model, o.tier, o.commitment_term_hours,
        median(p.usd_per_gpu_hour) filter (where p.gpus_per_node = 1) as single_gpu_peer_usd,
        median(p.usd_per_gpu_hour) as any_peer_usd
    from latest as o
    join latest as p
        on p.provider = o.provider
        and p.gpu_model = o.gpu_model
        and p.billing_model = o.billing_model
        and p.offer_id != o.offer_id
    group by all
),

scope_checked as (
    select
        l.*,
        l.usd_per_gpu_hour / nullif(pp.single_gpu_peer_usd, 0) as single_ratio,
        l.usd_per_gpu_hour / nullif(pp.any_peer_usd, 0) as any_ratio
    from latest as l
    left join peer_prices as pp
        on pp.source_name = l.source_name and pp.provider = l.provider and pp.offer_id = l.offer_id
        and pp.billing_model = l.billing_model
        -- tier and commitment term are null for most options: null matches null here.
        and pp.tier is not distinct from l.tier
        and pp.commitment_term_hours is not distinct from l.commitment_term_hours
),

flagged as (
    select
        *,
        -- Heuristic, flagged not fixed: a per-GPU price ≈ gpus_per_node × its peers is a node price
        -- recorded per GPU; a per-node price ≈ peers / gpus_per_node is a GPU price recorded per node.
        coalesce(gpus_per_node > 1 and (
            (price_scope = 'per_gpu' and coalesce(single_ratio, any_ratio)
                between 0.8 * gpus_per_node and 1.25 * gpus_per_node)
            or (price_scope = 'per_node' and single_ratio
                between 0.8 / gpus_per_node and 1.25 / gpus_per_node)
        ), false) as is_scope_suspect
    from scope_checked
),

final as (
    select
        offer_id, provider, gpu_model, gpus_per_node, billing_model,
        usd_per_gpu_hour, usd_per_node_hour,
        price_amount, currency, price_unit, price_scope,
        billing_granularity, billing_granularity_s, min_term_hours,
        storage_usd_per_gb_month, egress_usd_per_gb, licence_usd_per_hour, setup_fee_usd,
        support_usd_per_month,
        valid_from, valid_until, observed_at, region, notes,
        rocm_version, os, kernel, amdgpu_driver_version,
        is_expired or is_not_yet_valid or is_too_old as is_stale,
        case
            when is_expired then 'QUOTE_EXPIRED'
            when is_not_yet_valid then 'QUOTE_NOT_YET_VALID'
            when is_too_old then 'QUOTE_TOO_OLD'
        end as stale_reason,
        source_name, source_file, file_sha256,
        tier, commitment_term_hours, vram_bytes_stated, max_quote_age_days,
        is_scope_suspect,
        case when is_scope_suspect then 'SCOPE_SUSPECT' end as scope_reason,
        fx_rate_date
    from flagged
)

select * from final

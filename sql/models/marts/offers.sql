-- One row per offer × billing option (billing model, tier, commitment term) as it stands now: the
-- latest observation of each, flagged when stale, pending (requested, no price yet), when its price
-- scope looks mistaken or its price is an outlier, with seed 000's procurement checklist.
with latest as (
    select * from {{ ref('int_quote_latest') }}
),

checklist as (
    select * from {{ ref('int_offer_checklist') }}
),

price_bands as (
    -- Plausible $/GPU-hour per GPU model (data/reference/price_bands.csv); '*' covers the others.
    select gpu_model, min_usd_per_gpu_hour, max_usd_per_gpu_hour from {{ source('ref', 'price_bands') }}
),

peers as (
    -- What the provider's other offers and the market charge (int_offer_market_peers: leave-one-out
    -- medians; single-GPU offers anchor the provider's price because their scope cannot be wrong).
    select * from {{ ref('int_offer_market_peers') }}
),

scope_checked as (
    select
        l.*,
        l.usd_per_gpu_hour / nullif(pp.single_gpu_peer_usd, 0) as single_ratio,
        l.usd_per_gpu_hour / nullif(pp.any_peer_usd, 0) as any_ratio,
        -- In log space: prices spread by factors (a scope slip is × gpus_per_node), not by dollars.
        -- Robust centre and spread (median, 1.4826 × MAD ≈ σ for normal data): one wild peer price
        -- cannot widen the spread enough to hide another.
        pp.market_peers, pp.market_median_usd,
        pp.market_sd_ln_usd,
        (ln(l.usd_per_gpu_hour::double) - pp.market_median_ln_usd) / nullif(pp.market_sd_ln_usd, 0) as market_z
    from latest as l
    left join peers as pp
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
        ), false) as is_scope_ratio_suspect,
        -- More than 3 robust σ (of log price) from at least 5 peer prices (same GPU model and billing
        -- model) AND at least twice or at most half their median: σ of a tight cluster (five offers
        -- at 1.99) is so small that an ordinary dearer provider (3.45) would be 3σ away, while a
        -- scope slip is a factor of gpus_per_node.
        coalesce(market_peers >= 5
            and (abs(market_z) > 3 or (market_sd_ln_usd = 0 and usd_per_gpu_hour != market_median_usd))
            and (usd_per_gpu_hour >= 2 * market_median_usd or usd_per_gpu_hour <= 0.5 * market_median_usd),
            false) as is_price_outlier
    from scope_checked
),

judged as (
    select
        *,
        -- A price the node's GPU count (× or ÷) away from the market median of ≥ 5 peers is a scope
        -- slip: not ranked. The median, not σ, decides: one wild peer cannot mask another. Any other
        -- outlier may be a real (dear or cheap) price: a PRICE_OUTLIER warning only.
        coalesce(market_peers >= 5 and gpus_per_node > 1 and (
            usd_per_gpu_hour / market_median_usd between 0.8 * gpus_per_node and 1.25 * gpus_per_node
            or usd_per_gpu_hour / market_median_usd between 0.8 / gpus_per_node and 1.25 / gpus_per_node
        ), false) as is_market_scope_slip
    from flagged
),

banded as (
    select
        j.*,
        coalesce(own.gpu_model, 'any-GPU') as band_gpu_model,
        coalesce(own.min_usd_per_gpu_hour, other.min_usd_per_gpu_hour) as band_min_usd,
        coalesce(own.max_usd_per_gpu_hour, other.max_usd_per_gpu_hour) as band_max_usd,
        coalesce(not (j.is_scope_ratio_suspect or j.is_market_scope_slip) and j.usd_per_gpu_hour not between
            coalesce(own.min_usd_per_gpu_hour, other.min_usd_per_gpu_hour)
            and coalesce(own.max_usd_per_gpu_hour, other.max_usd_per_gpu_hour), false) as is_price_implausible
    from judged as j
    left join price_bands as own on own.gpu_model = j.gpu_model
    left join price_bands as other on other.gpu_model = '*'
),

final as (
    select
        f.offer_id, f.provider, f.gpu_model, f.gpus_per_node, f.billing_model,
        f.usd_per_gpu_hour, f.usd_per_node_hour,
        f.price_amount, f.currency, f.price_unit, f.price_scope,
        f.billing_granularity, f.billing_granularity_s, f.min_term_hours,
        f.storage_usd_per_gb_month, f.egress_usd_per_gb, f.licence_usd_per_hour, f.setup_fee_usd,
        f.support_usd_per_month,
        f.valid_from, f.valid_until, f.observed_at, f.region, f.notes,
        f.rocm_version, f.os, f.kernel, f.amdgpu_driver_version,
        f.is_not_listed or f.is_expired or f.is_not_yet_valid or f.is_too_old or f.is_age_unknown as is_stale,
        case
            when f.is_not_listed then 'NOT_LISTED'
            when f.is_expired then 'QUOTE_EXPIRED'
            when f.is_not_yet_valid then 'QUOTE_NOT_YET_VALID'
            when f.is_too_old then 'QUOTE_TOO_OLD'
            when f.is_age_unknown then 'QUOTE_AGE_UNKNOWN'
        end as stale_reason,
        f.source_name, f.source_file, f.file_sha256,
        f.tier, f.commitment_term_hours, f.vram_bytes_stated, f.max_quote_age_days,
        f.is_scope_ratio_suspect or f.is_market_scope_slip as is_scope_suspect,
        case when f.is_scope_ratio_suspect or f.is_market_scope_slip then 'SCOPE_SUSPECT' end as scope_reason,
        f.fx_rate_date,
        f.quote_status, f.requested_on,
        case when f.quote_status = 'requested' then 'QUOTE_PENDING' end as pending_reason,
        case
            when f.is_scope_ratio_suspect then format(
                '{} price {} $/GPU-h is about {} × the provider''s other {} {} offers ({} GPUs per node)',
                f.price_scope, round(f.usd_per_gpu_hour, 4), round(coalesce(f.single_ratio, f.any_ratio), 2),
                f.gpu_model, f.billing_model, f.gpus_per_node)
            when f.is_market_scope_slip then format(
                '{} price {} $/GPU-h is about {} × the median ({}) of {} other {} {} prices ({} GPUs per node)',
                f.price_scope, round(f.usd_per_gpu_hour, 4), round(f.usd_per_gpu_hour / f.market_median_usd, 2),
                round(f.market_median_usd, 4), f.market_peers, f.gpu_model, f.billing_model, f.gpus_per_node)
            when f.is_price_outlier then format(
                '{} $/GPU-h is {} robust σ (log price, 1.4826 × MAD) from {} other {} {} prices (median {})',
                round(f.usd_per_gpu_hour, 4), coalesce(round(f.market_z, 1)::varchar, 'infinitely many'),
                f.market_peers, f.gpu_model, f.billing_model, round(f.market_median_usd, 4))
        end as scope_detail,
        -- Warnings do not exclude: an unusual GPU count (6 GPUs in a node) may be real; check it.
        list_filter([
            case when f.gpus_per_node not in (1, 2, 4, 8, 16) then 'GPU_COUNT_UNUSUAL' end,
            case when f.is_price_outlier and not f.is_market_scope_slip and not f.is_scope_ratio_suspect
                then 'PRICE_OUTLIER' end,
            -- No date in the row, the file or sources.yaml: observed_at is only when the file landed.
            case when f.observed_at_basis = 'landed_at' and f.quote_status = 'quoted' then 'OBSERVED_AT_UNKNOWN' end
        ], lambda w: w is not null) as warnings,
        f.cpu_model, f.cpu_cores, f.system_ram_bytes, f.nvme_bytes, f.interconnect, f.network_gbps,
        f.virtualisation, f.software_tested,
        c.check_accelerator, c.check_memory_virtualisation, c.check_rocm, c.check_software_stack,
        c.check_topology, c.check_cpu_ram, c.check_nvme, c.check_network, c.check_total_cost,
        c.check_benchmark, c.checklist_missing,
        f.observed_at_basis,
        -- Outside the GPU model's plausible band (and not already explained as a scope slip): one
        -- vendor's impossible price is excluded from ranking with its reason; it never blocks a publish.
        case when f.is_price_implausible then 'PRICE_IMPLAUSIBLE' end as price_band_reason,
        case when f.is_price_implausible then format(
            '{} $/GPU-h is outside the plausible {} band {} to {} $/GPU-h (data/reference/price_bands.csv)',
            round(f.usd_per_gpu_hour, 4), f.band_gpu_model, f.band_min_usd, f.band_max_usd) end as price_band_detail,
        -- The GPU's vendor from the catalog (data/reference/gpus.csv): AMD or NVIDIA (docs/warehouse.md).
        g.vendor
    from banded as f
    left join {{ source('ref', 'gpus') }} as g on g.model = f.gpu_model
    left join checklist as c
        on c.source_name = f.source_name and c.provider = f.provider and c.offer_id = f.offer_id
        and c.billing_model = f.billing_model
        and c.tier is not distinct from f.tier
        and c.commitment_term_hours is not distinct from f.commitment_term_hours
)

select * from final

-- One row per offer × billing option (billing model, tier, commitment term) as it stands now: the
-- latest observation of each, flagged when stale, pending (requested, no price yet), when its price
-- scope looks mistaken or its price is an outlier, with seed 000's procurement checklist.
with latest as (
    select * from int_quote_latest
),

checklist as (
    select * from int_offer_checklist
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

market_prices as (
    -- Every other current price of the same GPU model and billing model, any provider or source
    -- (leave-one-out: a price is never its own peer, so one wild price cannot hide by widening σ).
    select
        o.source_name, o.provider, o.offer_id, o.billing_model, o.tier, o.commitment_term_hours,
        count(p.usd_per_gpu_hour) as market_peers,
        -- In log space: prices spread by factors (a scope slip is × gpus_per_node), not by dollars.
        -- Robust centre and spread (median, 1.4826 × MAD ≈ σ for normal data): one wild peer price
        -- cannot widen the spread enough to hide another.
        median(ln(p.usd_per_gpu_hour::double)) as market_median_ln_usd,
        1.4826 * mad(ln(p.usd_per_gpu_hour::double)) as market_sd_ln_usd,
        median(p.usd_per_gpu_hour::double) as market_median_usd
    from latest as o
    join latest as p
        on p.gpu_model = o.gpu_model
        and p.billing_model = o.billing_model
        and not (p.source_name = o.source_name and p.provider = o.provider and p.offer_id = o.offer_id
            and p.tier is not distinct from o.tier
            and p.commitment_term_hours is not distinct from o.commitment_term_hours)
    where o.usd_per_gpu_hour > 0 and p.usd_per_gpu_hour > 0
    group by all
),

scope_checked as (
    select
        l.*,
        l.usd_per_gpu_hour / nullif(pp.single_gpu_peer_usd, 0) as single_ratio,
        l.usd_per_gpu_hour / nullif(pp.any_peer_usd, 0) as any_ratio,
        mp.market_peers, mp.market_median_usd,
        mp.market_sd_ln_usd,
        (ln(l.usd_per_gpu_hour::double) - mp.market_median_ln_usd) / nullif(mp.market_sd_ln_usd, 0) as market_z
    from latest as l
    left join peer_prices as pp
        on pp.source_name = l.source_name and pp.provider = l.provider and pp.offer_id = l.offer_id
        and pp.billing_model = l.billing_model
        -- tier and commitment term are null for most options: null matches null here.
        and pp.tier is not distinct from l.tier
        and pp.commitment_term_hours is not distinct from l.commitment_term_hours
    left join market_prices as mp
        on mp.source_name = l.source_name and mp.provider = l.provider and mp.offer_id = l.offer_id
        and mp.billing_model = l.billing_model
        and mp.tier is not distinct from l.tier
        and mp.commitment_term_hours is not distinct from l.commitment_term_hours
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
        f.is_not_listed or f.is_expired or f.is_not_yet_valid or f.is_too_old as is_stale,
        case
            when f.is_not_listed then 'NOT_LISTED'
            when f.is_expired then 'QUOTE_EXPIRED'
            when f.is_not_yet_valid then 'QUOTE_NOT_YET_VALID'
            when f.is_too_old then 'QUOTE_TOO_OLD'
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
                then 'PRICE_OUTLIER' end
        ], lambda w: w is not null) as warnings,
        f.cpu_model, f.cpu_cores, f.system_ram_bytes, f.nvme_bytes, f.interconnect, f.network_gbps,
        f.virtualisation, f.software_tested,
        c.check_accelerator, c.check_memory_virtualisation, c.check_rocm, c.check_software_stack,
        c.check_topology, c.check_cpu_ram, c.check_nvme, c.check_network, c.check_total_cost,
        c.check_benchmark, c.checklist_missing
    from judged as f
    left join checklist as c
        on c.source_name = f.source_name and c.provider = f.provider and c.offer_id = f.offer_id
        and c.billing_model = f.billing_model
        and c.tier is not distinct from f.tier
        and c.commitment_term_hours is not distinct from f.commitment_term_hours
)

select * from final

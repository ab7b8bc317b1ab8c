-- One row per offer option (offer × billing option, per source) as it stands now: the latest
-- observation of each, flagged when stale, pending (requested, no price yet), when its price scope
-- looks mistaken or its price is an outlier (int_offer_price_flags), with seed 000's procurement
-- checklist (int_offer_checklist). The offers mart publishes it without the internal keys
-- offer_option_id and cross_source_option_id.
with latest as (
    select * from {{ ref('int_quote_latest') }}
),

price_flags as (
    select * from {{ ref('int_offer_price_flags') }}
),

checklist as (
    select * from {{ ref('int_offer_checklist') }}
),

gpus as (
    select gpu_model, vendor from {{ source('ref', 'gpus') }}
),

final as (
    select
        f.offer_option_id, f.cross_source_option_id,
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
        p.is_scope_suspect, p.scope_reason,
        f.fx_rate_date,
        f.quote_status, f.requested_on,
        case when f.quote_status = 'requested' then 'QUOTE_PENDING' end as pending_reason,
        p.scope_detail,
        -- Warnings do not exclude: an unusual GPU count (6 GPUs in a node) may be real; check it.
        list_filter([
            case when not list_contains(conv.usual_gpus_per_node, f.gpus_per_node) then 'GPU_COUNT_UNUSUAL' end,
            case when p.is_price_outlier_warning then 'PRICE_OUTLIER' end,
            -- No date in the row, the file or sources.yaml: observed_at is only when the file landed.
            case when f.observed_at_basis = 'landed_at' and f.quote_status = 'quoted' then 'OBSERVED_AT_UNKNOWN' end
        ], lambda w: w is not null) as warnings,
        f.cpu_model, f.cpu_cores, f.system_ram_bytes, f.nvme_bytes, f.interconnect, f.network_gbps,
        f.virtualisation, f.software_tested,
        c.check_accelerator, c.check_memory_virtualisation, c.check_rocm, c.check_software_stack,
        c.check_topology, c.check_cpu_ram, c.check_nvme, c.check_network, c.check_total_cost,
        c.check_benchmark, c.checklist_missing,
        f.observed_at_basis,
        p.price_band_reason, p.price_band_detail,
        -- The GPU's vendor from the catalog (data/reference/gpus.csv): AMD or NVIDIA (docs/warehouse.md).
        g.vendor
    from latest as f
    join price_flags as p using (offer_option_id)
    left join checklist as c using (offer_option_id)
    left join gpus as g using (gpu_model)
    cross join {{ ref('stg_conventions') }} as conv
)

select * from final

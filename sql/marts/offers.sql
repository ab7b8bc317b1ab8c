-- One row per offer × billing option as it stands now: the latest observation of each.
with observations as (
    select * from stg_quote_observations
),

latest as (
    select *
    from observations
    qualify row_number() over (
        partition by source_name, provider, offer_id, billing_model
        order by observed_at desc, file_sha256, row_number
    ) = 1
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
        is_expired or is_not_yet_valid as is_stale,
        case
            when is_expired then 'QUOTE_EXPIRED'
            when is_not_yet_valid then 'QUOTE_NOT_YET_VALID'
        end as stale_reason,
        source_name, source_file, file_sha256
    from latest
)

select * from final

-- One row per observation of an offer × billing option: every price ever seen, with when and where.
with observations as (
    select * from stg_quote_observations
),

final as (
    select
        offer_id, provider, gpu_model, gpu_name_raw, gpus_per_node, billing_model,
        price_amount, currency, price_unit, price_scope,
        usd_per_gpu_hour, usd_per_node_hour, fx_rate_date, hours_per_month,
        observed_at, valid_from, valid_until, region, notes,
        rocm_version, os, kernel, amdgpu_driver_version,
        source_name, source_file, file_sha256, row_number
    from observations
)

select * from final

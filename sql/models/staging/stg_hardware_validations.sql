-- One row per on-hardware validation of a rented host against one offer (evidence files under
-- <warehouse dir>/validations/), with what the probe measured and whether it is the offer's latest
-- (read by the offers' checklist and the cost model; published as hardware_validations).
with validations as (
    select * from {{ source('raw', 'hardware_validations') }}
),

final as (
    select
        validation_id,
        host,
        offer_id,
        verdict,
        reasons,
        validated_at::timestamptz as validated_at,
        provider,
        port,
        "user" as ssh_user,
        quoted_gpu_model,
        quoted_gpu_count,
        gpu_models_found,
        gpu_count_found,
        logical_device_count,
        vram_bytes_per_gpu_min,
        rocm_version,
        partition_modes,
        gemm_bf16_8192_tflops,
        hbm_copy_gbps,
        findings,
        host_key_fingerprint,
        probe_sha256,
        evidence_path,
        -- The newest validation of an offer decides whether it may be ranked.
        row_number() over (partition by offer_id order by validated_at::timestamptz desc, validation_id) = 1
            as is_latest_for_offer
    from validations
)

select * from final

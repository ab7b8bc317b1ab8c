-- One row per on-hardware validation of a rented host against one offer (evidence files under
-- <warehouse dir>/validations/, landed as format probe-json), with what the probe measured, the
-- verdict decided in SQL (int_validation_verdicts over int_validation_checks) and whether it is the
-- offer's latest (int_latest_validations).
with validations as (
    select * from {{ ref('stg_hardware_validations') }}
),

verdicts as (
    select * from {{ ref('int_validation_verdicts') }}
),

latest as (
    select validation_id from {{ ref('int_latest_validations') }}
),

final as (
    select
        v.validation_id, v.host, v.offer_id, d.verdict, d.reasons, v.validated_at, v.provider, v.port, v.ssh_user,
        v.quoted_gpu_model, v.quoted_gpu_count, v.gpu_models_found, v.gpu_count_found, v.logical_device_count,
        v.vram_bytes_per_gpu_min, v.rocm_version, v.partition_modes, v.gemm_bf16_8192_tflops, v.hbm_copy_gbps,
        v.findings, v.host_key_fingerprint, v.probe_sha256, v.evidence_path,
        l.validation_id is not null as is_latest_for_offer,
        v.recorded_verdict,
        d.checks_failed
    from validations as v
    join verdicts as d using (validation_id)
    left join latest as l using (validation_id)
)

select * from final

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

facts as (
    select * from {{ ref('int_validation_facts') }}
),

latest as (
    select validation_id from {{ ref('int_latest_validations') }}
),

final as (
    select
        v.validation_id, v.host, v.offer_id, d.verdict, d.reasons, v.validated_at, v.provider, v.port, v.ssh_user,
        v.quoted_gpu_model, v.quoted_gpu_count,
        -- What the probe measured, from the landed facts the verdict read (the record's own copy when the
        -- raw probe output is not there to decide on).
        coalesce(f.found_models, v.gpu_models_found) as gpu_models_found, coalesce(f.physical_gpu_count, v.gpu_count_found) as gpu_count_found,
        coalesce(f.logical_devices, v.logical_device_count) as logical_device_count,
        coalesce(f.vram_smallest, v.vram_bytes_per_gpu_min) as vram_bytes_per_gpu_min,
        coalesce(f.probe_rocm_version, v.rocm_version) as rocm_version,
        coalesce(f.probe_partition_modes, v.partition_modes) as partition_modes,
        coalesce(f.probe_gemm_bf16_8192_tflops, v.gemm_bf16_8192_tflops) as gemm_bf16_8192_tflops,
        coalesce(f.probe_hbm_copy_gbps, v.hbm_copy_gbps) as hbm_copy_gbps,
        v.findings, v.host_key_fingerprint, v.probe_sha256, v.evidence_path,
        l.validation_id is not null as is_latest_for_offer,
        v.recorded_verdict,
        d.checks_failed
    from validations as v
    join verdicts as d using (validation_id)
    left join facts as f using (validation_id)
    left join latest as l using (validation_id)
)

select * from final

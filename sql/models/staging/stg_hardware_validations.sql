-- One row per validate-host evidence record (format probe-json, landed like any input), typed, with
-- the facts of the probe output it was decided on. `recorded_verdict` is what validate-host printed;
-- the warehouse's verdict is re-decided from these facts (int_validation_verdicts).
with validations as (
    select * from {{ source('raw', 'hardware_validations') }}
),

final as (
    select
        validation_id,
        source_name,
        file_sha256,
        host,
        offer_id,
        verdict as recorded_verdict,
        reasons as recorded_reasons,
        validated_at::timestamptz as validated_at,
        provider,
        port,
        "user" as ssh_user,
        quoted_gpu_model,
        quoted_gpu_count,
        quoted_virtualisation,
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
        -- Only a probe document of the known schema can be decided on (otherwise only the recorded
        -- transport and probe reasons stand, as in validate-host).
        coalesce(probe_found and probe_schema_version = 'provider-eval.probe/1', false) as probe_decidable,
        probe_document_problems,
        probe_rocm_version,
        amdgpu_driver_version,
        amdgpu_driver_kind,
        xgmi_links_enabled,
        xgmi_links_disabled,
        compute_partitions,
        memory_partitions,
        torch_version,
        torch_hip_version,
        torch_cuda_version,
        torch_importable,
        torch_device_count,
        torch_error,
        finding_codes,
        finding_messages,
        probe_gemm_bf16_8192_tflops,
        probe_hbm_copy_gbps,
        probe_gemm_bf16_8192_text,
        probe_hbm_copy_text,
        gpu_source
    from validations
)

select * from final

"""Contracts for host-validation evidence (probe-json): one row per validation, one per GPU it enumerated."""
import pandera.polars as pa
import polars as pl

from models.common import Lineage

VERDICTS = ["pass", "fail", "inconclusive"]
RUN_STATES = ["ran", "timed_out", "missing"]


class HardwareValidation(Lineage):
    """One validate-host record with the facts of the probe output it was decided on."""

    validation_id: str = pa.Field(str_matches=r"^val-[0-9A-Za-z-]+$")
    host: str = pa.Field(nullable=True)
    port: pl.Int64 = pa.Field(nullable=True)
    user: str = pa.Field(nullable=True)
    offer_id: str = pa.Field(str_length={"min_value": 1})
    provider: str = pa.Field(nullable=True)
    # What validate-host printed; the warehouse's verdict is re-decided in SQL (int_validation_verdicts).
    verdict: str = pa.Field(isin=VERDICTS)
    reasons: pl.List(pl.String) = pa.Field(nullable=True)
    validated_at: str = pa.Field(str_length={"min_value": 1})
    quoted_gpu_model: str = pa.Field(nullable=True)
    quoted_gpu_count: pl.Int64 = pa.Field(nullable=True)
    # The quote's `virtualisation` when validated (records before it was kept have none).
    quoted_virtualisation: str = pa.Field(nullable=True, isin=["bare_metal", "passthrough", "partitioned"])
    transport_problems: pl.List(pl.String) = pa.Field(nullable=True)
    findings: pl.List(pl.String) = pa.Field(nullable=True)
    host_key_fingerprint: str = pa.Field(nullable=True)
    probe_sha256: str = pa.Field(nullable=True)
    gpu_models_found: pl.List(pl.String) = pa.Field(nullable=True)
    gpu_count_found: pl.Int64 = pa.Field(nullable=True)
    logical_device_count: pl.Int64 = pa.Field(nullable=True)
    vram_bytes_per_gpu_min: pl.Int64 = pa.Field(nullable=True)
    rocm_version: str = pa.Field(nullable=True)
    partition_modes: pl.List(pl.String) = pa.Field(nullable=True)
    gemm_bf16_8192_tflops: pl.Float64 = pa.Field(nullable=True)
    hbm_copy_gbps: pl.Float64 = pa.Field(nullable=True)
    probe_found: pl.Boolean
    probe_schema_version: str = pa.Field(nullable=True)
    probe_document_problems: pl.List(pl.String) = pa.Field(nullable=True)
    probe_rocm_version: str = pa.Field(nullable=True)
    amdgpu_driver_version: str = pa.Field(nullable=True)
    amdgpu_driver_kind: str = pa.Field(nullable=True)
    xgmi_links_enabled: pl.Int64 = pa.Field(nullable=True, ge=0)
    xgmi_links_disabled: pl.Int64 = pa.Field(nullable=True, ge=0)
    compute_partitions: pl.List(pl.String) = pa.Field(nullable=True)
    memory_partitions: pl.List(pl.String) = pa.Field(nullable=True)
    torch_version: str = pa.Field(nullable=True)
    torch_hip_version: str = pa.Field(nullable=True)
    torch_cuda_version: str = pa.Field(nullable=True)
    torch_importable: pl.Boolean
    torch_device_count: pl.Int64 = pa.Field(nullable=True, ge=0)
    torch_error: str = pa.Field(nullable=True)
    finding_codes: pl.List(pl.String) = pa.Field(nullable=True)
    finding_messages: pl.List(pl.String) = pa.Field(nullable=True)
    probe_gemm_bf16_8192_tflops: pl.Float64 = pa.Field(nullable=True)
    probe_hbm_copy_gbps: pl.Float64 = pa.Field(nullable=True)
    probe_gemm_bf16_8192_text: str = pa.Field(nullable=True)
    probe_hbm_copy_text: str = pa.Field(nullable=True)
    gpu_source: str = pa.Field(nullable=True)
    # Whether the raw probe output (validations/probes/<sha256>.json) was there to decide on.
    probe_output_landed: pl.Boolean
    # os-release PRETTY_NAME and `uname -r` of the host: with ROCm and PyTorch, the stack AMD's matrix judges.
    os_pretty_name: str = pa.Field(nullable=True)
    kernel_release: str = pa.Field(nullable=True)
    nvidia_driver_version: str = pa.Field(nullable=True)
    cuda_driver_version: str = pa.Field(nullable=True)
    nvcc_cuda_version: str = pa.Field(nullable=True)
    rccl_busbw_gbps: pl.Float64 = pa.Field(nullable=True)
    rccl_busbw_text: str = pa.Field(nullable=True)
    rccl_gpus: pl.Int64 = pa.Field(nullable=True, ge=0)
    rccl_message_bytes: pl.Int64 = pa.Field(nullable=True, ge=0)
    rccl_timed_out: pl.Boolean = pa.Field(nullable=True)
    rvs_gst_conf: str = pa.Field(nullable=True)
    rvs_gst_results: pl.Int64 = pa.Field(nullable=True, ge=0)
    rvs_gst_missed: pl.Int64 = pa.Field(nullable=True, ge=0)
    rvs_gst_missed_gflops: pl.Int64 = pa.Field(nullable=True)
    rvs_gst_missed_target_gflops: pl.Int64 = pa.Field(nullable=True)
    # --deep on an AMD host (docs/validation.md): *_run is ran / timed_out / missing, null when not attempted.
    transferbench_a2a_gbps: pl.Float64 = pa.Field(nullable=True)
    transferbench_a2a_text: str = pa.Field(nullable=True)
    transferbench_a2a_run: str = pa.Field(nullable=True, isin=RUN_STATES)
    rocblas_fp32_4000_gflops: pl.Float64 = pa.Field(nullable=True)
    rocblas_fp32_4000_text: str = pa.Field(nullable=True)
    rocblas_fp32_4000_run: str = pa.Field(nullable=True, isin=RUN_STATES)
    babelstream_triad_mbps: pl.Float64 = pa.Field(nullable=True)
    babelstream_triad_text: str = pa.Field(nullable=True)
    babelstream_run: str = pa.Field(nullable=True, isin=RUN_STATES)
    babelstream_gpus: pl.Int64 = pa.Field(nullable=True, ge=0)
    workload_template: str = pa.Field(nullable=True)
    workload_skipped: pl.Boolean = pa.Field(nullable=True)
    workload_problem: str = pa.Field(nullable=True)
    workload_result_format: str = pa.Field(nullable=True)
    evidence_path: str

    class Config:
        unique = ["file_sha256", "row_number"]


class ValidationGpu(pa.DataFrameModel):
    """One device the probe enumerated on a validated host (partitions are separate devices)."""

    source_name: str
    validation_id: str
    file_sha256: str = pa.Field(str_matches=r"^[0-9a-f]{64}$")
    gpu_index: pl.Int64 = pa.Field(nullable=True)
    bdf: str = pa.Field(nullable=True)
    pci_device_id: str = pa.Field(nullable=True)
    gfx_target: str = pa.Field(nullable=True)
    vendor: str = pa.Field(nullable=True)
    market_name: str = pa.Field(nullable=True)
    name_gpu_model: str = pa.Field(nullable=True)
    name_reason: str = pa.Field(nullable=True)
    name_candidates: pl.List(pl.String) = pa.Field(nullable=True)
    vram_bytes: pl.Int64 = pa.Field(nullable=True, ge=0)
    partition_id: str = pa.Field(nullable=True)
    ecc_uncorrected_volatile: pl.Int64 = pa.Field(nullable=True, ge=0)
    mig_mode: str = pa.Field(nullable=True)
    enumerated_by: str = pa.Field(isin=["tools", "torch"])

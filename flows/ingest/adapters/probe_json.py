"""probe-json: one validate-host evidence record (val-*.json) with the raw probe output it was decided on.

The record (flows/probe/evidence.py, schema provider-eval.validation/1) names the host, the quote and
the verdict validate-host printed; its companion validations/probes/<probe_sha256>.json holds the probe's
stdout byte for byte. One accepted row per record (hardware_validations) plus one detail row per GPU
the probe enumerated (validation_gpus): the facts the SQL verdict (int_validation_checks) decides on.
A record that cannot be loaded is one quarantined row, EVIDENCE_INVALID, naming every bad field.
"""
import datetime as dt
import json
import math
from pathlib import Path

import polars as pl

from flows.ingest.adapters import probe_facts
from flows.ingest.adapters.base import FileContext, ParseResult
from flows.ingest.adapters.quarantine import empty_quarantine
from flows.probe import sanitise

EVIDENCE_SCHEMA = "provider-eval.validation/1"
EVIDENCE_INVALID = "EVIDENCE_INVALID"
MAX_RECORD_BYTES = 8 * 2**20  # a record is a few kB; its raw probe output is capped at 4 MiB by the SSH client

# Record fields → column types (the public hardware_validations columns come from these).
RECORD_COLUMNS = {
    "validation_id": pl.String, "host": pl.String, "port": pl.Int64, "user": pl.String,
    "offer_id": pl.String, "provider": pl.String, "verdict": pl.String, "reasons": pl.List(pl.String),
    "validated_at": pl.String, "quoted_gpu_model": pl.String, "quoted_gpu_count": pl.Int64,
    "quoted_virtualisation": pl.String,
    # What the SSH session reported (a timeout, cut output, a non-zero exit): facts of the run, not of the host.
    "transport_problems": pl.List(pl.String),
    "findings": pl.List(pl.String), "host_key_fingerprint": pl.String, "probe_sha256": pl.String,
}
MEASURED_COLUMNS = {
    "gpu_models_found": ("gpu_models", pl.List(pl.String)), "gpu_count_found": ("gpu_count", pl.Int64),
    "logical_device_count": ("logical_device_count", pl.Int64),
    "vram_bytes_per_gpu_min": ("vram_bytes_per_gpu_min", pl.Int64), "rocm_version": ("rocm_version", pl.String),
    "partition_modes": ("partition_modes", pl.List(pl.String)),
    "gemm_bf16_8192_tflops": ("gemm_bf16_8192_tflops", pl.Float64), "hbm_copy_gbps": ("hbm_copy_gbps", pl.Float64),
}
# Facts read from the raw probe output (after sanitise.py, the one boundary for what a host sends).
PROBE_COLUMNS = {
    "probe_found": pl.Boolean, "probe_schema_version": pl.String, "probe_document_problems": pl.List(pl.String),
    "probe_rocm_version": pl.String, "amdgpu_driver_version": pl.String, "amdgpu_driver_kind": pl.String,
    "xgmi_links_enabled": pl.Int64, "xgmi_links_disabled": pl.Int64, "compute_partitions": pl.List(pl.String),
    "memory_partitions": pl.List(pl.String), "torch_version": pl.String, "torch_hip_version": pl.String,
    "torch_cuda_version": pl.String, "torch_importable": pl.Boolean, "torch_device_count": pl.Int64,
    "torch_error": pl.String, "finding_codes": pl.List(pl.String), "finding_messages": pl.List(pl.String),
    "probe_gemm_bf16_8192_tflops": pl.Float64, "probe_hbm_copy_gbps": pl.Float64,
    "probe_gemm_bf16_8192_text": pl.String, "probe_hbm_copy_text": pl.String, "gpu_source": pl.String,
    "probe_output_landed": pl.Boolean, "os_pretty_name": pl.String, "kernel_release": pl.String,
    "nvidia_driver_version": pl.String, "cuda_driver_version": pl.String, "nvcc_cuda_version": pl.String,
    "rccl_busbw_gbps": pl.Float64, "rccl_busbw_text": pl.String, "rccl_gpus": pl.Int64,
    "rccl_message_bytes": pl.Int64, "rccl_timed_out": pl.Boolean,
    "rvs_gst_conf": pl.String, "rvs_gst_results": pl.Int64, "rvs_gst_missed": pl.Int64,
    "rvs_gst_missed_gflops": pl.Int64, "rvs_gst_missed_target_gflops": pl.Int64,
    # --deep on an AMD host: TransferBench a2a, rocBLAS FP32 4000^3, BabelStream (the slowest GPU's Triad);
    # *_run is 'ran', 'timed_out' or 'missing' (not installed), null when not attempted.
    "transferbench_a2a_gbps": pl.Float64, "transferbench_a2a_text": pl.String, "transferbench_a2a_run": pl.String,
    "rocblas_fp32_4000_gflops": pl.Float64, "rocblas_fp32_4000_text": pl.String, "rocblas_fp32_4000_run": pl.String,
    "babelstream_triad_mbps": pl.Float64, "babelstream_triad_text": pl.String, "babelstream_run": pl.String,
    "babelstream_gpus": pl.Int64,
    "workload_template": pl.String, "workload_skipped": pl.Boolean, "workload_problem": pl.String,
    "workload_result_format": pl.String,
}
LINEAGE = {"source_name": pl.String, "source_file": pl.String, "file_sha256": pl.String, "row_number": pl.Int64}
SCHEMA = {**LINEAGE, **RECORD_COLUMNS, **{k: t for k, (_, t) in MEASURED_COLUMNS.items()}, **PROBE_COLUMNS,
          "evidence_path": pl.String}
GPU_SCHEMA = {
    # source_name + file_sha256: every staged table carries them (an incremental build deletes a file's rows by them).
    "source_name": pl.String, "validation_id": pl.String, "file_sha256": pl.String, "gpu_index": pl.Int64, "bdf": pl.String,
    "pci_device_id": pl.String, "gfx_target": pl.String, "vendor": pl.String, "market_name": pl.String,
    "name_gpu_model": pl.String, "name_reason": pl.String, "name_candidates": pl.List(pl.String), "vram_bytes": pl.Int64, "partition_id": pl.String,
    "ecc_uncorrected_volatile": pl.Int64, "mig_mode": pl.String, "enumerated_by": pl.String,
}
_PYTHON_TYPES = {pl.String: str, pl.Int64: int, pl.Float64: (int, float), pl.Boolean: bool}


def _type_problem(name: str, value, dtype) -> str | None:
    """Why a value cannot go in its column (None when it can)."""
    if value is None:
        return None
    if isinstance(dtype, pl.List):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return f"{name}: expected a list of text, got {type(value).__name__}"
        return None
    wanted = _PYTHON_TYPES[dtype]
    if (isinstance(value, bool) and dtype != pl.Boolean) or not isinstance(value, wanted):
        return f"{name}: expected {dtype}, got {type(value).__name__} {str(value)[:40]!r}"
    if dtype == pl.Int64 and not -2**63 <= value < 2**63:
        return f"{name}: {value} does not fit a 64-bit integer"
    if dtype == pl.Float64 and not math.isfinite(float(value)):
        return f"{name}: {value} is not a finite number"
    return None


def companion_probe(path: Path) -> list[Path]:
    """The raw probe output a record was decided on (validations/probes/<sha256>.json), if it is there."""
    try:
        sha = json.loads(path.read_text(encoding="utf-8")).get("probe_sha256")
    except (OSError, ValueError, AttributeError, RecursionError):
        return []
    if not isinstance(sha, str) or len(sha) != 64 or not all(c in "0123456789abcdef" for c in sha):
        return []  # never a path built from arbitrary record text
    candidate = path.parent / "probes" / f"{sha}.json"
    return [candidate] if candidate.is_file() else []


def _read_record(ctx: FileContext) -> tuple[dict | None, list[str]]:
    """The record as a dict, or the reasons it is not one."""
    data = ctx.path.read_bytes()
    if len(data) > MAX_RECORD_BYTES:
        return None, [f"{len(data):,} bytes, over the {MAX_RECORD_BYTES:,}-byte cap for a record"]
    try:
        record = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        return None, [f"not readable JSON: {type(exc).__name__}: {str(exc)[:200]}"]
    if not isinstance(record, dict):
        return None, [f"not a JSON object (a {type(record).__name__})"]
    missing = [k for k in ("validation_id", "host", "offer_id", "verdict", "reasons", "validated_at") if k not in record]
    if record.get("schema_version") != EVIDENCE_SCHEMA or missing:
        return None, [f"not a {EVIDENCE_SCHEMA} record (missing {missing})"]
    return record, []


def _record_problems(record: dict, row: dict) -> list[str]:
    """Every reason one record's row cannot be loaded."""
    problems = [p for name, dtype in SCHEMA.items() if name not in LINEAGE and (p := _type_problem(name, row[name], dtype))]
    for key in ("validation_id", "offer_id", "verdict", "validated_at"):
        if not isinstance(record.get(key), str) or not record[key].strip():
            problems.append(f"{key}: missing or empty")
    if record.get("verdict") not in ("pass", "fail", "inconclusive"):
        problems.append(f"verdict: {str(record.get('verdict'))[:40]!r} is not pass, fail or inconclusive")
    try:
        if dt.datetime.fromisoformat(record["validated_at"]).tzinfo is None:
            problems.append(f"validated_at: {record['validated_at']!r} has no time zone")
    except (TypeError, ValueError, KeyError):
        problems.append(f"validated_at: {str(record.get('validated_at'))[:40]!r} is not an ISO 8601 time")
    return problems


def _probe(ctx: FileContext, sha: str | None) -> tuple[bool, dict | None, list[str]]:
    """Whether the raw probe output landed with the record, its cleaned document, and what sanitise.py had to change."""
    landed = next((p for o, p in ctx.companions.items() if sha and Path(o).name == f"{sha}.json"), None)
    if landed is None:
        return False, None, []
    return True, *sanitise.parse_probe_output(Path(landed).read_bytes().decode("utf-8", "replace"))


def parse(ctx: FileContext) -> ParseResult:
    """One evidence record → one hardware_validations row (+ its GPUs), or one EVIDENCE_INVALID quarantine row."""
    record, problems = _read_record(ctx)
    row, gpus = None, []
    if record is not None:
        measured = record.get("measured") if isinstance(record.get("measured"), dict) else {}
        landed, probe, document_problems = _probe(
            ctx, record.get("probe_sha256") if isinstance(record.get("probe_sha256"), str) else None)
        row = {"source_name": ctx.source_name, "source_file": ctx.original_name, "file_sha256": ctx.file_sha256,
               "row_number": 1, **{k: record.get(k) for k in RECORD_COLUMNS},
               **{col: measured.get(key) for col, (key, _) in MEASURED_COLUMNS.items()},
               **probe_facts.probe_facts(probe, document_problems), **probe_facts.record_facts(record), "probe_output_landed": landed,
               "evidence_path": ctx.original_path or str(ctx.path)}
        problems = _record_problems(record, row)
        if not problems:
            gpus = probe_facts.gpu_rows(probe, record["validation_id"], ctx.source_name, ctx.file_sha256)
    if problems:
        raw = ctx.path.read_bytes()[:2000].decode("utf-8", "replace")
        quarantined = pl.DataFrame([{"row_number": 1, "reason_code": EVIDENCE_INVALID, "detail": "; ".join(problems),
                                     "raw_record": json.dumps({"text": raw})}], schema=empty_quarantine().schema)
        return ParseResult(pl.DataFrame(schema=SCHEMA), quarantined, rows_in=1,
                           details={"validation_gpus": pl.DataFrame(schema=GPU_SCHEMA)})
    return ParseResult(pl.DataFrame([row], schema=SCHEMA, strict=True), empty_quarantine(), rows_in=1,
                       details={"validation_gpus": pl.DataFrame(gpus, schema=GPU_SCHEMA, strict=True)})

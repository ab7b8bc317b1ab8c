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

from flows.ingest import names
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


def _finite(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value) if math.isfinite(float(value)) else None
    except OverflowError:
        return None


def _whole(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and -2**63 <= value < 2**63 else None


def _as_text(value) -> str | None:
    """A reported value as at most 60 printable characters (None when not reported)."""
    return None if value is None else sanitise.clean_text(str(value))[:60]


def _text(value) -> str | None:
    return value if isinstance(value, str) else None


def _probe_facts(probe: dict | None, problems: list[str]) -> dict:
    """The per-validation facts of the probe document (all null when none came back)."""
    probe = probe if isinstance(probe, dict) else {}
    rocm, links, part, host = (probe.get(k) or {} for k in ("rocm", "links", "partition", "host"))
    torch = probe.get("torch") or {}
    findings = [f for f in probe.get("findings") or [] if isinstance(f, dict) and isinstance(f.get("code"), str)]
    return {
        "probe_found": bool(probe), "probe_schema_version": _text(probe.get("schema_version")),
        "probe_document_problems": [sanitise.clean_text(p) for p in problems],
        "probe_rocm_version": _text(rocm.get("version_file")) or _text(rocm.get("amdsmi_rocm_version")),
        "amdgpu_driver_version": _text(rocm.get("amdgpu_driver_version")),
        "amdgpu_driver_kind": _text(rocm.get("amdgpu_driver_kind")),
        "xgmi_links_enabled": _whole(links.get("xgmi_enabled")), "xgmi_links_disabled": _whole(links.get("xgmi_disabled")),
        "compute_partitions": [str(m) for m in part.get("compute") or []],
        "memory_partitions": [str(m) for m in part.get("memory") or []],
        "torch_version": _text(torch.get("version")), "torch_hip_version": _text(torch.get("hip")),
        "torch_cuda_version": _text(torch.get("cuda")),
        "torch_importable": bool(torch.get("importable")),
        "torch_device_count": _whole(torch.get("device_count")) if torch.get("importable") else None,
        "torch_error": _text(torch.get("error")),
        # Codes and messages in the probe's order (the messages are host text, cleaned by sanitise.py).
        "finding_codes": [str(f.get("code")) for f in findings],
        "finding_messages": [_text(f.get("message")) or "" for f in findings],
        "probe_gemm_bf16_8192_tflops": _finite(torch.get("gemm_bf16_8192_tflops")),
        "probe_hbm_copy_gbps": _finite(torch.get("hbm_copy_gbps")),
        # What the host sent when it is not a finite number (text, a boolean): reported, but not a measurement.
        "probe_gemm_bf16_8192_text": _as_text(torch.get("gemm_bf16_8192_tflops")),
        "probe_hbm_copy_text": _as_text(torch.get("hbm_copy_gbps")),
        "gpu_source": _text(probe.get("gpu_source")),
        # The stack AMD's matrix is keyed by (software_stack): the OS and kernel the host runs.
        "os_pretty_name": _text(host.get("os_pretty_name")), "kernel_release": _text(host.get("kernel_release")),
        **_nvidia_and_deep_facts(probe),
    }


def _nvidia_and_deep_facts(probe: dict) -> dict:
    """NVIDIA driver/CUDA versions and what rccl-tests and RVS gst printed (all null when they did not run)."""
    nv, deep = probe.get("nvidia") or {}, probe.get("deep") or {}
    rccl = deep.get("rccl_allreduce") if isinstance(deep.get("rccl_allreduce"), dict) else {}
    rvs = deep.get("rvs_gst") if isinstance(deep.get("rvs_gst"), dict) else None
    results = [r for r in (rvs or {}).get("results") or [] if isinstance(r, dict)]
    missed = [r for r in results if r.get("met") is not True]
    return {
        "nvidia_driver_version": _text(nv.get("driver_version")), "cuda_driver_version": _text(nv.get("cuda_driver_version")),
        "nvcc_cuda_version": _text(nv.get("nvcc_cuda_version")),
        "rccl_busbw_gbps": _finite(rccl.get("busbw_in_place_gbps")), "rccl_busbw_text": _as_text(rccl.get("busbw_in_place_gbps")),
        "rccl_gpus": _whole(rccl.get("gpus")), "rccl_message_bytes": _whole(rccl.get("message_bytes")),
        "rccl_timed_out": rccl.get("timed_out") if isinstance(rccl.get("timed_out"), bool) else None,
        "rvs_gst_conf": (_text(rvs.get("conf")) or "") if rvs is not None else None,
        "rvs_gst_results": len(results) if rvs is not None else None,
        "rvs_gst_missed": len(missed) if rvs is not None else None,
        "rvs_gst_missed_gflops": _whole(missed[0].get("gflops")) if missed else None,
        "rvs_gst_missed_target_gflops": _whole(missed[0].get("target_gflops")) if missed else None,
        **_benchmark_facts(deep),
    }


def _run_state(deep: dict, key: str) -> str | None:
    """How a --deep tool went: not attempted (None), 'missing' (not installed), 'timed_out' or 'ran'."""
    if key not in deep:
        return None
    result = deep[key]
    if not isinstance(result, dict):
        return "missing" if result is None else None
    runs = result.get("runs") if isinstance(result.get("runs"), list) else [result]
    return "timed_out" if any(isinstance(r, dict) and r.get("timed_out") is True for r in runs) else "ran"


def _benchmark_facts(deep: dict) -> dict:
    """TransferBench, rocBLAS and BabelStream results (what the host printed when it is not a finite number)."""
    a2a = deep.get("transferbench_a2a") if isinstance(deep.get("transferbench_a2a"), dict) else {}
    blas = deep.get("rocblas_fp32_4000") if isinstance(deep.get("rocblas_fp32_4000"), dict) else {}
    stream = deep.get("babelstream") if isinstance(deep.get("babelstream"), dict) else {}
    runs = [r for r in stream.get("runs") or [] if isinstance(r, dict)]
    triads = [_finite(r.get("triad_mbps")) for r in runs]
    # Every GPU must reach the floor: the slowest counts, and one GPU without a number leaves it undecided.
    bad = next((r.get("triad_mbps") for r, v in zip(runs, triads) if v is None), None)
    return {
        "transferbench_a2a_gbps": _finite(a2a.get("average_gbps")), "transferbench_a2a_text": _as_text(a2a.get("average_gbps")),
        "transferbench_a2a_run": _run_state(deep, "transferbench_a2a"),
        "rocblas_fp32_4000_gflops": _finite(blas.get("gflops")), "rocblas_fp32_4000_text": _as_text(blas.get("gflops")),
        "rocblas_fp32_4000_run": _run_state(deep, "rocblas_fp32_4000"),
        "babelstream_triad_mbps": min(triads) if triads and None not in triads else None,
        "babelstream_triad_text": _as_text(bad) if None in triads else (_as_text(min(triads)) if triads else None),
        "babelstream_run": _run_state(deep, "babelstream"), "babelstream_gpus": len(runs) if stream else None,
    }


def _record_facts(record: dict) -> dict:
    """The run's own facts: SSH problems (read back from the reasons of records older than the field) and the workload."""
    transport = record.get("transport_problems")
    if transport is None and isinstance(record.get("reasons"), list):
        transport = [r.removeprefix("INCONCLUSIVE transport: ") for r in record["reasons"]
                     if isinstance(r, str) and r.startswith("INCONCLUSIVE transport: ")]
    work = record.get("workload") if isinstance(record.get("workload"), dict) else {}
    problem = _text(work.get("problem"))
    # Records older than `skipped` said so only in the problem text.
    skipped = work.get("skipped") if isinstance(work.get("skipped"), bool) else problem == "not run: the host failed validation"
    return {"transport_problems": transport, "workload_template": _text(work.get("template")),
            "workload_skipped": skipped if work else None, "workload_problem": None if skipped else problem,
            "workload_result_format": _text(work.get("result_format"))}


def _gpu_rows(probe: dict | None, validation_id: str, source_name: str, sha: str) -> list[dict]:
    """One row per device the probe enumerated; PyTorch's devices when no tool listed any."""
    probe = probe if isinstance(probe, dict) else {}
    gpus, how = [g for g in probe.get("gpus") or [] if isinstance(g, dict)], "tools"
    torch = probe.get("torch") or {}
    if not gpus and torch.get("device_count") and (torch.get("hip") or torch.get("cuda")):
        how, nvidia = "torch", not torch.get("hip")
        gpus = [{"index": d.get("index"), "vendor": "NVIDIA" if nvidia else None,
                 "market_name": d.get("name") if nvidia else None,
                 "gfx_target": None if nvidia else (_text(d.get("gcn_arch_name")) or "").split(":")[0] or None,
                 "vram_bytes": d.get("total_memory_bytes")} for d in torch.get("devices") or [] if isinstance(d, dict)]
    rows = []
    for g in gpus:
        name = _text(g.get("market_name"))
        # nvidia-smi's board name is the identity of an NVIDIA GPU (no PCI ids in the catalog): the shared resolver reads it.
        resolved = names.resolve_gpu(name) if name else None
        rows.append({
            "source_name": source_name, "validation_id": validation_id, "file_sha256": sha, "gpu_index": _whole(g.get("index")),
            "bdf": _text(g.get("bdf")), "pci_device_id": (_text(g.get("pci_device_id")) or "").lower() or None,
            "gfx_target": _text(g.get("gfx_target")), "vendor": _text(g.get("vendor")), "market_name": name,
            "name_gpu_model": resolved.gpu_model if resolved else None,
            "name_reason": resolved.reason_code if resolved else None,
            # "NVIDIA H100" names a family (gpu_ambiguous_names.csv): its variants, any of which it may be.
            "name_candidates": names.gpu_names().ambiguous.get(names.parse_gpu(name).core, [])
            if resolved and resolved.reason_code == "GPU_VARIANT_UNKNOWN" else [],
            "vram_bytes": _whole(g.get("vram_bytes")) if _finite(g.get("vram_bytes")) else None,
            "partition_id": None if g.get("partition_id") is None else str(g.get("partition_id")),
            "ecc_uncorrected_volatile": _whole(g.get("ecc_uncorrected_volatile")),
            "mig_mode": _text(g.get("mig_mode")), "enumerated_by": how,
        })
    return rows


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
               **_probe_facts(probe, document_problems), **_record_facts(record), "probe_output_landed": landed,
               "evidence_path": ctx.original_path or str(ctx.path)}
        problems = _record_problems(record, row)
        if not problems:
            gpus = _gpu_rows(probe, record["validation_id"], ctx.source_name, ctx.file_sha256)
    if problems:
        raw = ctx.path.read_bytes()[:2000].decode("utf-8", "replace")
        quarantined = pl.DataFrame([{"row_number": 1, "reason_code": EVIDENCE_INVALID, "detail": "; ".join(problems),
                                     "raw_record": json.dumps({"text": raw})}], schema=empty_quarantine().schema)
        return ParseResult(pl.DataFrame(schema=SCHEMA), quarantined, rows_in=1,
                           details={"validation_gpus": pl.DataFrame(schema=GPU_SCHEMA)})
    return ParseResult(pl.DataFrame([row], schema=SCHEMA, strict=True), empty_quarantine(), rows_in=1,
                       details={"validation_gpus": pl.DataFrame(gpus, schema=GPU_SCHEMA, strict=True)})

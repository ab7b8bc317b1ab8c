"""The facts one probe document and its evidence record land as: per-validation columns and one row per GPU."""
import math

from flows.ingest import names
from flows.probe import sanitise


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


def probe_facts(probe: dict | None, problems: list[str]) -> dict:
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


def record_facts(record: dict) -> dict:
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


def gpu_rows(probe: dict | None, validation_id: str, source_name: str, sha: str) -> list[dict]:
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

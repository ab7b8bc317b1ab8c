"""Compare what the probe measured with the quote, the GPU catalog and the acceptance floors (AMD and NVIDIA)."""
import csv
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from flows.ingest import names
from provider_eval.paths import REFERENCE_DIR

PROBE_SCHEMA = "provider-eval.probe/1"
# Usable VRAM is reported in MiB and exceeds the marketed decimal GB on every catalogued Instinct
# (MI300X 192 GB → 196592 MiB = 206.1e9 B); 3 % below marketed still passes, to allow firmware
# and SR-IOV carve-outs (a VF MI300X shows 196048 MiB).
VRAM_TOLERANCE = 0.97
# Findings that make a host unusable, and findings that only make the result uncertain.
FAIL_FINDINGS = {"NO_GPU_VISIBLE", "NOT_AMD", "NO_KFD_ACCESS", "DRIVER_NOT_LOADED", "NO_HIP_GPUS",
                 "NO_BINARY_FOR_GPU", "HSA_OUT_OF_RESOURCES", "GPU_HANG", "UNCORRECTABLE_HW_ERROR",
                 "NVIDIA_DRIVER_NOT_LOADED", "NVIDIA_DRIVER_MISMATCH"}
# Findings about the ROCm stack: on a host quoted with an NVIDIA GPU they do not apply (a note, never a fail).
AMD_ONLY_FINDINGS = {"NOT_AMD", "NO_KFD_ACCESS", "DRIVER_NOT_LOADED", "NO_HIP_GPUS", "HSA_OUT_OF_RESOURCES",
                     "SRIOV_VF", "MISSING_IOMMU_PT", "INBOX_DRIVER", "XGMI_LINK_ERRORS"}
NVIDIA = "NVIDIA"
INCONCLUSIVE_FINDINGS = {"TOOL_TIMED_OUT", "TORCH_TIMED_OUT", "PROBE_CRASHED"}
# Micro-benchmark checks in acceptance_thresholds.csv → the probe's measured field.
BENCH_CHECKS = {"gemm_bf16_8192": "gemm_bf16_8192_tflops", "hbm_copy": "hbm_copy_gbps"}


@dataclass
class Reason:
    """One check's outcome: status is pass, fail, inconclusive or note."""

    check: str
    status: str
    message: str

    def text(self) -> str:
        """One line for the mart and the CLI."""
        return f"{self.status.upper()} {self.check}: {self.message}"


@dataclass
class Verdict:
    """The overall verdict with every reason and what was identified."""

    verdict: str
    reasons: list[Reason]
    measured: dict = field(default_factory=dict)


def _number(value) -> float | None:
    """A measurement as a finite float, or None (NaN, ±Inf, text, booleans and overflowing integers never pass a floor)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def printable(text: str, limit: int = 300) -> str:
    """Host-supplied text made safe to show and store: no control characters or escapes, bounded length."""
    return "".join(c if c.isprintable() else " " for c in str(text))[:limit]


def _read_csv(name: str, reference_dir: Path) -> list[dict]:
    with open(reference_dir / name, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@dataclass(frozen=True)
class Reference:
    """The catalog facts the verdict needs, read from data/reference."""

    gpus: list[dict]
    thresholds: list[dict]
    rocm_floors: dict[str, str]

    @classmethod
    def load(cls, reference_dir: Path = REFERENCE_DIR) -> "Reference":
        """Read gpus.csv, acceptance_thresholds.csv and validation_rocm_floors.csv."""
        floors = {r["gpu_model"]: r["min_rocm_version"] for r in _read_csv("validation_rocm_floors.csv", reference_dir)}
        return cls(_read_csv("gpus.csv", reference_dir), _read_csv("acceptance_thresholds.csv", reference_dir), floors)

    def models_for_device_id(self, device_id: str) -> list[str]:
        """Catalog models whose PCI device ids (PF or VF) include this one."""
        return [g["model"] for g in self.gpus
                if device_id in re.findall(r"0x[0-9a-f]{4}", (g.get("pci_device_ids") or "").lower())]

    def models_for_gfx(self, gfx: str) -> list[str]:
        """Catalog models built on this LLVM target."""
        return [g["model"] for g in self.gpus if (g.get("llvm_target") or "").split(" ")[0] == gfx]

    def catalog(self, model: str) -> dict | None:
        """The catalog row of a model."""
        return next((g for g in self.gpus if g["model"] == model), None)


def _version_tuple(text: str | None) -> tuple[int, ...] | None:
    m = re.match(r"\s*(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    return tuple(int(x) for x in m.groups(default="0")) if m else None


def identify(gpu: dict, ref: Reference) -> tuple[list[str], str]:
    """Catalog candidates for one GPU: AMD by PCI device id, else gfx target (never by name); NVIDIA by its name.

    nvidia-smi's name is the product name the driver reads from the board ("NVIDIA H100 80GB HBM3");
    the catalog has no NVIDIA PCI ids, so the one name resolver (flows/ingest/names.py) maps it.
    """
    if gpu.get("vendor") == NVIDIA:
        name = gpu.get("market_name")
        resolved = names.resolve_gpu(name)
        how = f"nvidia-smi name {printable(name, 80)!r}"
        if resolved.gpu_model:
            return [resolved.gpu_model], how
        if resolved.reason_code == "GPU_VARIANT_UNKNOWN":  # "NVIDIA H100": SXM, PCIe or NVL, cannot tell
            variants = names.gpu_names().ambiguous.get(names.parse_gpu(str(name)).core, [])
            return variants, f"{how} names several variants"
        return [], f"{how}: {resolved.reason_code}"
    if gpu.get("pci_device_id"):
        models = ref.models_for_device_id(gpu["pci_device_id"])
        if models:
            return models, f"PCI device id {gpu['pci_device_id']}"
    if gpu.get("gfx_target"):
        return ref.models_for_gfx(gpu["gfx_target"]), f"gfx target {gpu['gfx_target']}"
    return [], "no PCI device id or gfx target reported"


def physical_gpus(gpus: list[dict]) -> list[dict]:
    """One record per physical GPU: partitions other than partition 0 are the same device."""
    return [g for g in gpus if str(g.get("partition_id") if g.get("partition_id") is not None else 0) == "0"]


def _physical_vram(gpu: dict, gpus: list[dict]) -> int | None:
    """A physical GPU's VRAM: the sum over its partitions (same BDF) when it is partitioned."""
    if not gpu.get("bdf"):
        return gpu.get("vram_bytes")
    parts = [g.get("vram_bytes") for g in gpus if g.get("bdf") == gpu["bdf"]]
    return None if any(p is None for p in parts) else sum(parts)


def decide(probe: dict | None, quote: dict, ref: Reference, transport_problems: list[str] = (),
           document_problems: list[str] = ()) -> Verdict:
    """Every check against the quote and the catalog; fail beats inconclusive beats pass.

    document_problems (sanitise.py: what had to be cut or dropped from the host's document) make the
    verdict inconclusive whatever the checks say: a document that breaks the schema decides nothing.
    """
    try:
        result = _decide(probe, quote, ref, transport_problems)
    except (TypeError, KeyError, AttributeError, ValueError, IndexError, OverflowError) as exc:
        # A value of a type no real probe prints (sanitise.py checks the leaves decide() uses, not all).
        reasons = [Reason("transport", "inconclusive", p) for p in transport_problems]
        reasons.append(Reason("probe_document", "inconclusive", "a value of an unexpected type "
                                                                f"({type(exc).__name__}: {printable(exc, 200)})"))
        result = Verdict("inconclusive", reasons, {})
    if document_problems:
        result.reasons[:0] = [Reason("probe_document", "inconclusive", printable(p)) for p in document_problems]
        result.verdict = "inconclusive"
    return result


def _decide(probe: dict | None, quote: dict, ref: Reference, transport_problems) -> Verdict:
    reasons: list[Reason] = [Reason("transport", "inconclusive", p) for p in transport_problems]
    measured: dict = {}
    if not isinstance(probe, dict) or probe.get("schema_version") != PROBE_SCHEMA:
        got = probe.get("schema_version") if isinstance(probe, dict) else None
        reasons.append(Reason("probe", "inconclusive", f"no probe document of schema {PROBE_SCHEMA} came back (got {got!r})"))
        return Verdict("inconclusive", reasons, measured)

    nvidia_quote = (ref.catalog(quote["gpu_model"]) or {}).get("vendor") == NVIDIA
    measured["quoted_vendor"] = NVIDIA if nvidia_quote else "AMD"
    findings = {f["code"]: f for f in probe.get("findings") or []}
    for code, f in findings.items():
        status = "fail" if code in FAIL_FINDINGS else "inconclusive" if code in INCONCLUSIVE_FINDINGS else "note"
        message = printable(f.get("message", ""))
        if nvidia_quote and code in AMD_ONLY_FINDINGS:
            status, message = "note", f"not applicable to an NVIDIA host ({message})"
        reasons.append(Reason(f"finding {printable(code, 40)}", status, message))

    quoted_model, quoted_count = quote["gpu_model"], int(quote["gpus_per_node"])
    gpus = probe.get("gpus") or []
    torch_facts = probe.get("torch") or {}
    if not gpus and torch_facts.get("device_count") and torch_facts.get("hip"):
        gpus = [{"index": d["index"], "gfx_target": (d.get("gcn_arch_name") or "").split(":")[0] or None,
                 "vram_bytes": d.get("total_memory_bytes")} for d in torch_facts.get("devices", [])]
    elif not gpus and torch_facts.get("device_count") and torch_facts.get("cuda"):
        # No nvidia-smi on PATH (a container without the utils): torch.cuda's device names and sizes.
        gpus = [{"index": d["index"], "vendor": NVIDIA, "market_name": d.get("name"),
                 "vram_bytes": d.get("total_memory_bytes")} for d in torch_facts.get("devices", [])]
    physical = physical_gpus(gpus)

    # GPU model: every physical GPU must be the quoted catalog model.
    found_models = set()
    for g in physical:
        models, how = identify(g, ref)
        if len(models) == 1:
            found_models.add(models[0])
        elif quoted_model in models:
            reasons.append(Reason("gpu_model", "inconclusive",
                                  f"GPU {g.get('index')}: {how} fits {', '.join(models)}; cannot tell which"))
        else:
            found_models.add(f"unknown ({how})")
    measured["gpu_models"] = sorted(found_models)
    # The marketing name is never the identity (a VF or a renamed board), but a name the shared
    # resolver reads as another catalog model is worth saying (flows/ingest/names.py).
    named = {names.resolve_gpu(g["market_name"]).gpu_model for g in physical
             if g.get("market_name") and g.get("vendor") != NVIDIA} - {None}
    if named and named != found_models and found_models <= {g["model"] for g in ref.gpus}:
        reasons.append(Reason("gpu_model", "note",
                              f"the tools' marketing name reads as {', '.join(sorted(named))}; "
                              f"the PCI device id / gfx target says {', '.join(sorted(found_models))}"))
    by_what = ("by the nvidia-smi name, read by flows/ingest/names.py" if physical and
               all(g.get("vendor") == NVIDIA for g in physical) else "by PCI device id / gfx target")
    if found_models == {quoted_model}:
        reasons.append(Reason("gpu_model", "pass", f"every GPU is a {quoted_model} ({by_what})"))
    elif found_models:
        reasons.append(Reason("gpu_model", "fail", f"quote says {quoted_model}, host has {', '.join(sorted(found_models))}"))

    # GPU count: physical GPUs, so a CPX/NPS4 host's logical devices are not counted as GPUs.
    measured["gpu_count"] = len(physical)
    measured["logical_device_count"] = len(gpus)
    if len(physical) == quoted_count:
        reasons.append(Reason("gpu_count", "pass", f"{len(physical)} GPU(s), as quoted"))
    elif len(physical) < quoted_count:
        reasons.append(Reason("gpu_count", "fail", f"quote says {quoted_count} GPU(s), host shows {len(physical)}"))
    else:
        reasons.append(Reason("gpu_count", "inconclusive", f"quote says {quoted_count} GPU(s), host shows {len(physical)}"))

    # Partition mode: logical devices per GPU change memory per device and throughput.
    modes = probe.get("partition") or {}
    compute_modes = set(modes.get("compute") or [])
    measured["partition_modes"] = sorted(compute_modes | set(modes.get("memory") or []))
    if compute_modes - {"SPX"} or len(gpus) > len(physical):
        reasons.append(Reason("partition", "inconclusive",
                              f"GPUs are partitioned ({', '.join(measured['partition_modes']) or 'mode unknown'}, "
                              f"{len(gpus)} logical devices on {len(physical)} GPU(s)); benchmarks assume SPX/NPS1"))

    mig = [g.get("index") for g in physical if str(g.get("mig_mode") or "").lower() == "enabled"]
    if mig:
        reasons.append(Reason("partition", "inconclusive", f"MIG mode is Enabled on GPU(s) {mig}: CUDA sees MIG "
                                                           "instances, not whole GPUs; memory and benchmarks assume whole GPUs"))

    # VRAM per GPU vs the catalog, with the documented tolerance.
    catalog = ref.catalog(quoted_model)
    vram = [_physical_vram(g, gpus) for g in physical]
    # Text, booleans or non-finite sizes count as not reported (never as a size that passes).
    vram = [int(v) for v in (_number(v) for v in vram) if v]
    measured["vram_bytes_per_gpu_min"] = min(vram) if vram else None
    if catalog and catalog.get("memory_gb_marketed") and physical:
        floor_bytes = int(float(catalog["memory_gb_marketed"]) * 1e9 * VRAM_TOLERANCE)
        if len(vram) < len(physical):
            reasons.append(Reason("vram", "inconclusive", "VRAM size not reported for every GPU"))
        elif min(vram) < floor_bytes:
            reasons.append(Reason("vram", "fail", f"smallest GPU has {min(vram)} bytes; a {quoted_model} has "
                                                  f"{catalog['memory_gb_marketed']} GB (floor {floor_bytes} bytes)"))
        else:
            reasons.append(Reason("vram", "pass", f"at least {min(vram)} bytes per GPU "
                                                  f"(catalog {catalog['memory_gb_marketed']} GB, tolerance 3 %)"))

    # ROCm release vs the floor for this GPU model.
    rocm = (probe.get("rocm") or {})
    rocm_version = rocm.get("version_file") or rocm.get("amdsmi_rocm_version")
    measured["rocm_version"] = rocm_version
    floor = ref.rocm_floors.get(quoted_model)
    if nvidia_quote:
        reasons.extend(_nvidia_reasons(probe, physical, measured))
    elif floor and physical:
        have, need = _version_tuple(rocm_version), _version_tuple(floor)
        if have is None:
            reasons.append(Reason("rocm", "inconclusive", "ROCm version not found (/opt/rocm/.info/version, amd-smi version)"))
        elif have < need:
            reasons.append(Reason("rocm", "fail", f"ROCm {rocm_version} is older than {floor}, the first release supporting {quoted_model}"))
        else:
            reasons.append(Reason("rocm", "pass", f"ROCm {rocm_version} (≥ {floor} for {quoted_model})"))

    # XGMI links on multi-GPU nodes: a disabled link cuts collective bandwidth.
    # XGMI is AMD's fabric: on an NVIDIA quote _nvidia_reasons says the check does not apply.
    links = {} if nvidia_quote else probe.get("links") or {}
    if links.get("xgmi_disabled"):
        reasons.append(Reason("links", "fail", f"{links['xgmi_disabled']} XGMI link(s) disabled"))
    elif links.get("xgmi_enabled"):
        reasons.append(Reason("links", "pass", f"{links['xgmi_enabled']} XGMI link(s) enabled, none disabled"))

    # Micro-benchmarks vs AMD's published floors.
    for row in ref.thresholds:
        if row["gpu_model"] != quoted_model or row["check"] not in BENCH_CHECKS:
            continue
        raw = torch_facts.get(BENCH_CHECKS[row["check"]])
        value = _number(raw)
        floor_value = float(row["pass_at_or_above"])
        measured[BENCH_CHECKS[row["check"]]] = value
        if raw is None:
            reasons.append(Reason(row["check"], "note", f"not measured ({_why_no_bench(torch_facts)}); floor {floor_value:g} {row['unit']}"))
        elif value is None:
            reasons.append(Reason(row["check"], "inconclusive", f"{printable(raw, 60)!s} is not a measurement "
                                                                f"(not a finite number); floor {floor_value:g} {row['unit']}"))
        elif value < floor_value:
            reasons.append(Reason(row["check"], "fail", f"{value} {row['unit']} is below the floor of {floor_value:g} ({row['source']})"))
        else:
            reasons.append(Reason(row["check"], "pass", f"{value} {row['unit']} ≥ {floor_value:g}"))

    reasons.extend(_deep_reasons(probe.get("deep") or {}, quoted_model, quoted_count, ref, measured))

    statuses = {r.status for r in reasons}
    verdict = "fail" if "fail" in statuses else "inconclusive" if "inconclusive" in statuses else "pass"
    return Verdict(verdict, reasons, measured)


def _nvidia_reasons(probe: dict, physical: list[dict], measured: dict) -> list[Reason]:
    """An NVIDIA host: driver and CUDA versions as found, ECC errors, and the ROCm checks marked not applicable."""
    nv = probe.get("nvidia") or {}
    torch_facts = probe.get("torch") or {}
    measured["nvidia_driver_version"] = nv.get("driver_version")
    measured["cuda_driver_version"] = nv.get("cuda_driver_version")
    measured["cuda_toolkit_version"] = nv.get("nvcc_cuda_version")
    reasons = [Reason(check, "note", f"not applicable: {why}") for check, why in (
        ("rocm", "an NVIDIA host runs CUDA, not ROCm (validation_rocm_floors.csv covers AMD GPUs only)"),
        ("links", "XGMI links are AMD's; NVLink is not checked yet"),
        ("software_stack", "the compatibility matrix (compat_checks) is AMD's ROCm matrix"))]
    stack = ", ".join(f"{label} {printable(value, 40)}" for label, value in (
        ("driver", nv.get("driver_version")), ("CUDA (driver)", nv.get("cuda_driver_version")),
        ("CUDA toolkit (nvcc)", nv.get("nvcc_cuda_version")), ("torch CUDA", torch_facts.get("cuda"))) if value)
    reasons.append(Reason("nvidia_stack", "note", f"found {stack}" if stack else
                          "no driver or CUDA version reported (nvidia-smi banner, nvcc, torch.version.cuda)"))
    # GPUs installed (nvidia-smi) vs usable from PyTorch: a container given fewer devices, or a CUDA
    # build the driver cannot run (torch then sees none).
    seen = torch_facts.get("device_count") if torch_facts.get("importable") and torch_facts.get("cuda") else None
    if isinstance(seen, int) and not isinstance(seen, bool) and physical and seen < len(physical):
        reasons.append(Reason("visible_gpus", "fail" if seen == 0 else "inconclusive",
                              f"PyTorch (CUDA {printable(torch_facts.get('cuda'), 20)}) sees {seen} of the "
                              f"{len(physical)} GPU(s) nvidia-smi lists"))
    counts = [_number(g.get("ecc_uncorrected_volatile")) for g in physical]
    bad = [(g.get("index"), int(c)) for g, c in zip(physical, counts) if c]
    if bad:
        reasons.append(Reason("ecc", "fail", "uncorrected ECC errors since the driver loaded "
                                             f"(ecc.errors.uncorrected.volatile.total): {bad}"))
    elif physical and all(c == 0 for c in counts):
        reasons.append(Reason("ecc", "pass", "no uncorrected ECC errors on any GPU since the driver loaded"))
    return reasons


def _deep_reasons(deep: dict, model: str, count: int, ref: Reference, measured: dict) -> list[Reason]:
    """rccl-tests all-reduce vs the 8-GPU floor, and RVS gst's own met/not-met, when they ran."""
    reasons = []
    rccl = deep.get("rccl_allreduce")
    if rccl and rccl.get("busbw_in_place_gbps") is not None and _number(rccl["busbw_in_place_gbps"]) is None:
        reasons.append(Reason("rccl_allreduce", "inconclusive", "all_reduce_perf bus bandwidth is not a finite number"))
    elif rccl and rccl.get("busbw_in_place_gbps") is not None:
        measured["rccl_allreduce_busbw_gbps"] = rccl["busbw_in_place_gbps"]
        floor = next((r for r in ref.thresholds if r["gpu_model"] == model and r["check"] == "rccl_allreduce_8gpu"), None)
        if floor and count == 8 and rccl.get("gpus") == 8 and rccl.get("message_bytes") == 8 * 1024 ** 3:
            ok = rccl["busbw_in_place_gbps"] >= float(floor["pass_at_or_above"])
            reasons.append(Reason("rccl_allreduce_8gpu", "pass" if ok else "fail",
                                  f"in-place busbw {rccl['busbw_in_place_gbps']} GB/s at 8 GiB vs floor {floor['pass_at_or_above']}"))
        else:
            reasons.append(Reason("rccl_allreduce", "note", f"in-place busbw {rccl['busbw_in_place_gbps']} GB/s "
                                                            f"({rccl.get('gpus')} GPUs, {rccl.get('message_bytes')} B); no floor applies"))
    elif rccl and rccl.get("timed_out"):
        reasons.append(Reason("rccl_allreduce", "inconclusive", "all_reduce_perf did not finish in time"))
    rvs = deep.get("rvs_gst")
    if rvs:
        results = rvs.get("results") or []
        missed = [r for r in results if not r["met"]]
        if missed:
            reasons.append(Reason("rvs_gst", "fail", f"{len(missed)} of {len(results)} RVS gst result(s) missed target, "
                                                     f"e.g. {missed[0]['gflops']} < {missed[0]['target_gflops']} GFLOPS"))
        elif results:
            reasons.append(Reason("rvs_gst", "pass", f"all {len(results)} RVS gst result(s) met target ({rvs['conf']})"))
        else:
            reasons.append(Reason("rvs_gst", "inconclusive", f"RVS gst ({rvs['conf']}) printed no result"))
    return reasons


def _why_no_bench(torch_facts: dict) -> str:
    if not torch_facts.get("importable"):
        return "PyTorch is not installed on the host"
    if not torch_facts.get("device_count"):
        return "PyTorch sees no GPU"
    return torch_facts.get("error") or "benchmarks not requested"

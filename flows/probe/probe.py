#!/usr/bin/env python3
"""On-host probe: collect GPU/ROCm/CUDA/OS facts and print one versioned JSON document (stdlib only).

Runs on the rented host with the system Python 3 (sent over SSH on stdin). Every external tool
runs under a deadline with bounded output, so the probe always finishes and always prints JSON.
PyTorch is used only if importable, and only in a child process with its own deadline.
"""
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time

SCHEMA_VERSION = "provider-eval.probe/1"
# Read from the host's environment here, not through provider_eval.settings: this script runs alone on
# the rented host with the standard library only (docs/configuration.md).
TOOL_TIMEOUT_S = float(os.environ.get("PROBE_TOOL_TIMEOUT_S", "20"))
TORCH_TIMEOUT_S = float(os.environ.get("PROBE_TORCH_TIMEOUT_S", "240"))
DEEP_TIMEOUT_S = float(os.environ.get("PROBE_DEEP_TIMEOUT_S", "900"))
RVS_CONF = "/opt/rocm/share/rocm-validation-suite/conf"
# PCI device id → RVS per-GPU conf folder (RVS ships conf/MI300X, MI325X, MI350X, MI355X).
RVS_MODEL_DIRS = {"0x74a1": "MI300X", "0x74a5": "MI325X", "0x75a0": "MI350X", "0x75a3": "MI355X"}
# AMD's cluster-validation commands and floors' own runs (ROCm/system-acceptance-docs
# docs/performance-bench/mi300x.rst): TransferBench all-to-all, rocBLAS FP32 4000^3, BabelStream per GPU
# (its wrapper.sh runs `hip-stream --device $RANK -n 50 -s 268435456` on each GPU under mpiexec).
TRANSFERBENCH_A2A = ["TransferBench", "a2a"]
ROCBLAS_FP32_4000 = ["rocblas-bench", "-f", "gemm", "-r", "s", "-m", "4000", "-n", "4000", "-k", "4000",
                     "--lda", "4000", "--ldb", "4000", "--ldc", "4000", "--transposeA", "N", "--transposeB", "T"]
BABELSTREAM = ["hip-stream", "-n", "50", "-s", "268435456"]
MAX_TOOL_BYTES = 2 * 1024 * 1024
MIB = 1024 * 1024
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|\^\[\[[0-9;]*m")

# Known failure messages (shared reference rocm_and_smoke_tests.md §4.2) → named finding codes.
KNOWN_FAILURES = [
    ("NO_KFD_ACCESS", re.compile(r"Unable to open /dev/kfd|open /dev/kfd: permission denied", re.I)),
    ("DRIVER_NOT_LOADED", re.compile(r"ROCk module is NOT loaded|amdgpu not found in modules", re.I)),
    ("NO_HIP_GPUS", re.compile(r"No HIP GPUs are available|no ROCm-capable device is detected", re.I)),
    ("NO_BINARY_FOR_GPU", re.compile(r"hipErrorNoBinaryForGpu|invalid device function|no kernel image is available")),
    ("HSA_OUT_OF_RESOURCES", re.compile(r"HSA_STATUS_ERROR_OUT_OF_RESOURCES")),
    ("GPU_HANG", re.compile(r"reason :GPU Hang|GPU reset begin!|VRAM is lost due to GPU reset|MODE1 reset")),
    ("UNCORRECTABLE_HW_ERROR", re.compile(r"uncorrectable hardware error")),
    ("XGMI_LINK_ERRORS", re.compile(r"correctable hardware errors detected in xgmi_wafl block")),
    # nvidia-smi's messages: kernel module not loaded (NVIDIA/nvidia-docker#988), and user-space library
    # newer/older than the loaded module after a partial driver upgrade (lyulyul/shine-cluster#50).
    ("NVIDIA_DRIVER_NOT_LOADED", re.compile(r"NVIDIA-SMI has failed because it couldn.t communicate with the NVIDIA driver")),
    ("NVIDIA_DRIVER_MISMATCH", re.compile(r"Failed to initialize NVML: Driver/library version mismatch")),
]
# `nvidia-smi --query-gpu` fields present since long before Hopper; one unknown field fails the whole
# query, so the newer ones are asked for separately (NVIDIA_EXTRA_FIELDS) and may be missing.
NVIDIA_FIELDS = ("index", "name", "pci.bus_id", "pci.device_id", "memory.total", "driver_version")
NVIDIA_EXTRA_FIELDS = ("index", "compute_cap", "mig.mode.current", "ecc.errors.uncorrected.volatile.total")

VF_DEVICE_IDS = {"0x74b5"}
RUNNING_TOOLS = set()  # process group ids of tools running now (each tool gets its own group)


def stop_tools_and_exit(signum, _frame):
    """On TERM/HUP (e.g. `timeout` on the host), take the running tools' process groups down too."""
    for pgid in list(RUNNING_TOOLS):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass
    os._exit(128 + signum)  # MI300X SR-IOV virtual function (reference §4.2 #8)


def sysroot_path(path):
    """Host files are read under PROBE_SYSROOT (default '/'), so a test host can serve captured files."""
    root = os.environ.get("PROBE_SYSROOT", "/")
    return os.path.join(root, path.lstrip("/"))


def read_text(path, limit=65536):
    """A small host file's text, or None when it is missing or unreadable."""
    try:
        with open(sysroot_path(path), "rb") as fh:
            return fh.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def run_tool(argv, timeout_s=TOOL_TIMEOUT_S):
    """Run one tool with a deadline; keep at most MAX_TOOL_BYTES of its output (spooled to a temp file, not RAM)."""
    started = time.monotonic()
    result = {"argv": argv, "rc": None, "stdout": "", "stderr": "", "timed_out": False, "missing": False}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as errf:
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=errf, start_new_session=True)
        except (FileNotFoundError, PermissionError, NotADirectoryError):
            result["missing"] = True
            return result
        RUNNING_TOOLS.add(proc.pid)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            result["timed_out"] = True
        finally:
            # Kill the whole process group: a wedged GPU tool may have children.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            proc.wait()
            RUNNING_TOOLS.discard(proc.pid)
        result["rc"] = proc.returncode
        for key, fh in (("stdout", out), ("stderr", errf)):
            fh.seek(0)
            result[key] = ANSI.sub("", fh.read(MAX_TOOL_BYTES).decode("utf-8", "replace"))
    result["seconds"] = round(time.monotonic() - started, 3)
    return result


def json_documents(text):
    """Every JSON document in text (amd-smi may print banners, legends or the same document twice)."""
    decoder, docs, i = json.JSONDecoder(), [], 0
    while i < len(text):
        starts = [p for p in (text.find("{", i), text.find("[", i)) if p >= 0]
        if not starts:
            break
        start = min(starts)
        try:
            doc, end = decoder.raw_decode(text, start)
        except ValueError:
            i = start + 1
            continue
        docs.append(doc)
        i = end
    return docs


def gpu_records(text):
    """Per-GPU dicts from amd-smi JSON: a list (amd-smi < 26) or {"gpu_data": [...]} (26+), first document only."""
    for doc in json_documents(text):
        if isinstance(doc, dict) and isinstance(doc.get("gpu_data"), list):
            doc = doc["gpu_data"]
        if isinstance(doc, dict) and "gpu" in doc:
            doc = [doc]
        if isinstance(doc, list) and all(isinstance(r, dict) for r in doc):
            return doc
    return []


def scalar(value):
    """A value from {"value": v, "unit": u}, a bare value, or None for "N/A"."""
    if isinstance(value, dict) and "value" in value:
        value = value["value"]
    if value is None or (isinstance(value, str) and value.strip().upper() in ("N/A", "NA", "")):
        return None
    return value


UNIT_BYTES = {"B": 1, "KB": 1024, "KIB": 1024, "MB": MIB, "MIB": MIB, "GB": 1024 * MIB, "GIB": 1024 * MIB}


def to_bytes(value, default_unit="MB"):
    """Memory as bytes; amd-smi's "MB" is MiB (196592 MB = torch's 196592MB = 206141652992 B)."""
    unit = value.get("unit", default_unit) if isinstance(value, dict) else default_unit
    number = scalar(value)
    if number is None:
        return None
    try:
        return int(float(number) * UNIT_BYTES[str(unit).strip().upper()])
    except (ValueError, KeyError, OverflowError, TypeError):  # NaN, Infinity, a list: not a size
        return None


def hex_id(value):
    """A PCI device id as lower-case 0x-hex, whatever the tool printed (0x74A1, 29857, '29857(0x74a1)')."""
    value = scalar(value)
    if value is None:
        return None
    text = str(value).strip().lower()
    m = re.search(r"0x([0-9a-f]+)", text)
    if m:
        return "0x%04x" % int(m.group(1), 16)
    if text.isdigit():
        return "0x%04x" % int(text)
    return None


def gfx_target(value):
    """'gfx942' from 'gfx942:sramecc+:xnack-' or 'amdgcn-amd-amdhsa--gfx942:…'."""
    value = scalar(value)
    m = re.search(r"gfx[0-9a-f]+", str(value or ""))
    return m.group(0) if m else None


def dig(record, *path):
    """record[a][b]… or None."""
    for key in path:
        if not isinstance(record, dict):
            return None
        record = record.get(key)
    return record


def parse_amdsmi_static(text):
    """GPU identity and VRAM from `amd-smi static --json`."""
    gpus = []
    for r in gpu_records(text):
        gpus.append({
            "index": r.get("gpu"),
            "bdf": scalar(dig(r, "bus", "bdf")),
            "pci_device_id": hex_id(dig(r, "asic", "device_id")),
            "gfx_target": gfx_target(dig(r, "asic", "target_graphics_version")),
            "market_name": scalar(dig(r, "asic", "market_name")),
            "product_name": scalar(dig(r, "board", "product_name")),
            "vram_bytes": to_bytes(dig(r, "vram", "size")),
            "driver_version": scalar(dig(r, "driver", "version")),
            "compute_partition": scalar(dig(r, "partition", "compute_partition")),
            "memory_partition": scalar(dig(r, "partition", "memory_partition")),
            "partition_id": scalar(dig(r, "partition", "partition_id")),
        })
    return gpus


def parse_amdsmi_list(text):
    """BDF, UUID and partition id per device from `amd-smi list --json`."""
    return [{"index": r.get("gpu"), "bdf": scalar(r.get("bdf")), "uuid": scalar(r.get("uuid")),
             "partition_id": scalar(r.get("partition_id"))} for r in gpu_records(text)]


def parse_amdsmi_metric_vram(text):
    """Total VRAM bytes per GPU index from `amd-smi metric --json` (mem_usage.total_vram)."""
    return {r.get("gpu"): to_bytes(dig(r, "mem_usage", "total_vram")) for r in gpu_records(text)}


def parse_amdsmi_version(text):
    """ROCm and amdgpu versions from `amd-smi version --json` (dict, or a list of one dict)."""
    for doc in json_documents(text):
        if isinstance(doc, list) and doc and isinstance(doc[0], dict):
            doc = doc[0]
        if isinstance(doc, dict):
            return {"amdsmi_version": scalar(doc.get("version") or doc.get("tool")),
                    "rocm_version": scalar(doc.get("rocm_version")),
                    "amdgpu_version": scalar(doc.get("amdgpu_version") or doc.get("amdgpu"))}
    # Human form: "AMDSMI Tool: … | ROCm version: 6.4.0 | amdgpu version: …"
    fields = dict(p.split(":", 1) for p in text.split("|") if ":" in p)
    fields = {k.strip().lower(): v.strip() for k, v in fields.items()}
    if fields:
        return {"amdsmi_version": fields.get("amdsmi tool"), "rocm_version": fields.get("rocm version"),
                "amdgpu_version": fields.get("amdgpu version")}
    return {}


def parse_amdsmi_topology(text):
    """Link counts by type between distinct GPUs, from either `amd-smi topology --json` schema."""
    counts = {}
    for r in gpu_records(text):
        if isinstance(r.get("links"), list):  # amd-smi >= 24.7
            pairs = [(link.get("link_type"), link.get("link_status")) for link in r["links"]
                     if isinstance(link, dict) and link.get("gpu") != r.get("gpu")]
        else:  # amd-smi <= 24.6: per-GPU dicts keyed gpu_N
            types, access = r.get("link_type") or {}, r.get("link_accessibility") or {}
            pairs = [(t, access.get(k)) for k, t in types.items() if k != "gpu_%s" % r.get("gpu")]
        for link_type, status in pairs:
            if link_type in (None, "SELF"):
                continue
            key = "%s_%s" % (str(link_type).lower(), "enabled" if status in (None, "ENABLED") else "disabled")
            counts[key] = counts.get(key, 0) + 1
    return counts


def parse_amdsmi_partition(text):
    """Compute/memory partition modes from `amd-smi partition --json` (several documents, then a legend)."""
    modes = {"compute": set(), "memory": set()}
    for doc in json_documents(text):
        stack = [doc]
        while stack:
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, dict):
                for key, value in item.items():
                    if isinstance(value, (dict, list)):
                        stack.append(value)
                        continue
                    v = scalar(value)
                    if v is None:
                        continue
                    if key in ("compute_partition", "accelerator_type", "partition_type") and str(v).upper() in ("SPX", "DPX", "TPX", "QPX", "CPX"):
                        modes["compute"].add(str(v).upper())
                    if key in ("memory_partition", "memory") and str(v).upper().startswith("NPS"):
                        modes["memory"].add(str(v).upper())
    return {k: sorted(v) for k, v in modes.items()}


def parse_rocm_smi_json(text):
    """Identity and VRAM per card from `rocm-smi --showproductname --showmeminfo vram --json`."""
    gpus = []
    for doc in json_documents(text):
        if not isinstance(doc, dict):
            continue
        for card, fields in sorted(doc.items()):
            if not (card.startswith("card") and isinstance(fields, dict)):
                continue
            f = {k.lower(): v for k, v in fields.items()}
            vram = scalar(f.get("vram total memory (b)"))
            gpus.append({
                "index": int(card[4:]) if card[4:].isdigit() else None,
                "pci_device_id": hex_id(f.get("card model") or f.get("device id")),
                "gfx_target": gfx_target(f.get("gfx version")),
                "market_name": scalar(f.get("card series") or f.get("device name")),
                "vram_bytes": int(vram) if vram is not None and str(vram).isdigit() else None,
            })
        if gpus:
            break
    return gpus


def parse_rocminfo(text):
    """GPU agents from `rocminfo`: gfx target, PCI id (Chip ID), marketing name, VRAM (first pool, KB)."""
    gpus = []
    for block in re.split(r"\*{5,}\s*\nAgent \d+\s*\n\*{5,}", text)[1:]:
        if not re.search(r"Device Type:\s+GPU", block):
            continue
        name = re.search(r"^\s*Name:\s+(\S+)", block, re.M)
        chip = re.search(r"Chip ID:\s+(\S+)", block)
        market = re.search(r"Marketing Name:\s+(.+)", block)
        pool = re.search(r"Pool 1\s*\n\s*Segment:\s+GLOBAL.*\n\s*Size:\s+(\d+)\(0x[0-9a-f]+\) KB", block)
        gpus.append({
            "index": len(gpus),
            "pci_device_id": hex_id(chip.group(1)) if chip else None,
            "gfx_target": gfx_target(name.group(1)) if name else None,
            "market_name": market.group(1).strip() if market else None,
            "vram_bytes": int(pool.group(1)) * 1024 if pool else None,
        })
    return gpus


def parse_rccl_allreduce(text):
    """In-place bus bandwidth (GB/s) at the largest message size from rccl-tests all_reduce_perf."""
    best = None
    for line in text.splitlines():
        cols = line.split()
        if len(cols) >= 13 and not line.lstrip().startswith("#") and cols[0].isdigit():
            try:
                size, busbw = int(cols[0]), float(cols[11])
            except ValueError:
                continue
            if best is None or size >= best[0]:
                best = (size, busbw)
    return {"message_bytes": best[0], "busbw_in_place_gbps": best[1]} if best else None


def parse_rvs_gst(text):
    """Each GPU's final GFLOPS, target and met flag from RVS gst `[RESULT] … met: TRUE` lines."""
    results = []
    pattern = re.compile(r"\[([^\]]+)\] \[GPU:: (\d+)\] GFLOPS (\d+) Target GFLOPS: (\d+) met: (TRUE|FALSE)")
    for m in pattern.finditer(text):
        results.append({"action": m.group(1), "gpu_id": int(m.group(2)), "gflops": int(m.group(3)),
                        "target_gflops": int(m.group(4)), "met": m.group(5) == "TRUE"})
    return results


def parse_transferbench_a2a(text):
    """The all-to-all average bandwidth (GB/s) from `TransferBench a2a`'s summary, or None."""
    m = re.search(r"Average bandwidth \(GPU Timed\):\s*([0-9]+(?:\.[0-9]+)?)\s*GB/s", text or "")
    return float(m.group(1)) if m else None


def parse_babelstream_triad(text):
    """Every Triad MBytes/sec of BabelStream's result tables (one table per run), in order."""
    found, in_table = [], False
    for line in (text or "").splitlines():
        cols = line.split()
        if cols[:2] == ["Function", "MBytes/sec"]:
            in_table = True
        elif in_table and len(cols) >= 2 and cols[0] == "Triad":
            try:
                found.append(float(cols[1]))
            except ValueError:
                pass
    return found


def parse_rocblas_gflops(text):
    """rocblas-Gflops of rocblas-bench's result line (the CSV line under its header), or None."""
    header = None
    for line in (text or "").splitlines():
        cols = [c.strip() for c in line.split(",")]
        if "rocblas-Gflops" in cols:
            header = cols
        elif header and len(cols) == len(header):
            try:
                return float(cols[header.index("rocblas-Gflops")])
            except ValueError:
                return None
    return None


def parse_nvidia_csv(text, fields):
    """Rows of `nvidia-smi --query-gpu=… --format=csv,noheader,nounits` as dicts ("[N/A]"/"N/A" → None)."""
    rows = []
    for line in (text or "").splitlines():
        cols = [c.strip() for c in line.split(",")]
        if len(cols) != len(fields):
            continue  # an error line, or a name with a comma in it: not a row we can trust
        row = {f: (None if c.upper() in ("N/A", "[N/A]", "[NOT SUPPORTED]", "") else c) for f, c in zip(fields, cols)}
        if "index" in row and not (row["index"] or "").isdigit():
            continue  # a header line (`index, name, …`) or garbage
        rows.append(row)
    return rows


def parse_nvidia_gpus(core_text, extra_text=""):
    """NVIDIA GPUs from the two --query-gpu calls; memory.total is MiB (81559 MiB = 85520809984 B on H100)."""
    extra = {r["index"]: r for r in parse_nvidia_csv(extra_text, NVIDIA_EXTRA_FIELDS)}
    gpus = []
    for r in parse_nvidia_csv(core_text, NVIDIA_FIELDS):
        more = extra.get(r["index"], {})
        # pci.device_id is device << 16 | vendor: 0x233010DE is 10de:2330 (nvidia-smi -q "Device Id").
        combined = hex_id(r["pci.device_id"])
        device = "0x%04x" % (int(combined, 16) >> 16) if combined and len(combined) > 6 else None
        ecc = more.get("ecc.errors.uncorrected.volatile.total")
        gpus.append({
            "index": int(r["index"]),
            "vendor": "NVIDIA",
            "bdf": (r["pci.bus_id"] or "").lower() or None,
            "pci_device_id": device,
            "market_name": r["name"],
            "vram_bytes": to_bytes(r["memory.total"], "MIB"),
            "driver_version": r["driver_version"],
            "compute_capability": more.get("compute_cap"),
            "mig_mode": more.get("mig.mode.current"),
            "ecc_uncorrected_volatile": int(ecc) if ecc and ecc.isdigit() else None,
        })
    return gpus


def parse_nvidia_smi_header(text):
    """Driver and CUDA versions from plain `nvidia-smi`'s banner (R610+ says "KMD Version"/"CUDA UMD Version")."""
    line = next((l for l in (text or "").splitlines() if "NVIDIA-SMI" in l and "Version" in l), "")
    driver = re.search(r"(?:Driver|KMD) Version:\s*([0-9][0-9.]*)", line)
    cuda = re.search(r"CUDA(?: UMD)? Version:\s*([0-9][0-9.]*)", line)
    return {"smi_version_line": line.strip(" |") or None,
            "driver_version": driver.group(1) if driver else None,
            "cuda_driver_version": cuda.group(1) if cuda else None}


def parse_nvcc_version(text):
    """The CUDA toolkit release from `nvcc --version` ("Cuda compilation tools, release 12.8, V12.8.61")."""
    m = re.search(r"release ([0-9]+\.[0-9]+)", text or "")
    return m.group(1) if m else None


def deep_checks(gpus):
    """rccl-tests all_reduce_perf and RVS gst, only when installed on the host."""
    out = {}
    n = len(gpus)
    if n >= 2:
        res = run_tool(["all_reduce_perf", "-b", "8", "-e", "8G", "-f", "2", "-g", str(n)], DEEP_TIMEOUT_S)
        out["rccl_allreduce"] = None if res["missing"] else dict(parse_rccl_allreduce(res["stdout"]) or {},
                                                                 gpus=n, timed_out=res["timed_out"])
    model_dir = RVS_MODEL_DIRS.get((gpus[0] if gpus else {}).get("pci_device_id"))
    if model_dir:
        res = run_tool(["rvs", "-c", "%s/%s/gst_single.conf" % (RVS_CONF, model_dir)], DEEP_TIMEOUT_S)
        out["rvs_gst"] = None if res["missing"] else {"conf": model_dir + "/gst_single.conf",
                                                       "results": parse_rvs_gst(res["stdout"]),
                                                       "timed_out": res["timed_out"]}
    if gpus and not any(g.get("vendor") == "NVIDIA" for g in gpus):
        out.update(amd_benchmarks(gpus))
    return out


def amd_benchmarks(gpus):
    """TransferBench a2a, rocBLAS FP32 and BabelStream on each GPU, with AMD's commands; None for a tool not installed."""
    out = {}
    res = run_tool(TRANSFERBENCH_A2A, DEEP_TIMEOUT_S)
    out["transferbench_a2a"] = None if res["missing"] else {
        "average_gbps": parse_transferbench_a2a(res["stdout"]), "timed_out": res["timed_out"]}
    res = run_tool(ROCBLAS_FP32_4000, DEEP_TIMEOUT_S)
    out["rocblas_fp32_4000"] = None if res["missing"] else {
        "gflops": parse_rocblas_gflops(res["stdout"]), "timed_out": res["timed_out"]}
    # One run per physical GPU (partitions are the same HBM), within one deep deadline in all.
    devices = sorted({g.get("index") for g in gpus if str(g.get("partition_id") or 0) == "0"
                      and isinstance(g.get("index"), int)})
    runs = []
    for index in devices:
        res = run_tool(BABELSTREAM[:1] + ["--device", str(index)] + BABELSTREAM[1:], DEEP_TIMEOUT_S / len(devices))
        if res["missing"]:
            break
        triads = parse_babelstream_triad(res["stdout"])
        runs.append({"device": index, "triad_mbps": min(triads) if triads else None, "timed_out": res["timed_out"]})
    out["babelstream"] = {"runs": runs} if runs else (None if devices else {"runs": []})
    return out


def parse_os_release(text):
    """/etc/os-release as a dict of its keys."""
    out = {}
    for line in (text or "").splitlines():
        if "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip().strip('"')
    return out


def finding(findings, code, message, evidence=None):
    """Append one named finding (deduplicated by code)."""
    if not any(f["code"] == code for f in findings):
        findings.append({"code": code, "message": message, "evidence": (evidence or "")[:300]})


def scan_known_failures(findings, text):
    """Turn known failure messages anywhere in tool output into named findings."""
    for code, pattern in KNOWN_FAILURES:
        m = pattern.search(text or "")
        if m:
            line = text[text.rfind("\n", 0, m.start()) + 1:text.find("\n", m.end()) if "\n" in text[m.end():] else None]
            finding(findings, code, "tool output reports: " + m.group(0), line.strip())


TORCH_CHILD = r"""
import json, sys, time
out = {"importable": False}
try:
    import torch
except Exception as exc:
    out["error"] = "%s: %s" % (type(exc).__name__, exc)
    print(json.dumps(out)); sys.exit(0)
out.update(importable=True, version=torch.__version__, hip=getattr(torch.version, "hip", None),
           cuda=getattr(torch.version, "cuda", None), device_count=0, devices=[])
try:
    out["available"] = bool(torch.cuda.is_available())
    out["device_count"] = torch.cuda.device_count() if out["available"] else 0
    for i in range(out["device_count"]):
        p = torch.cuda.get_device_properties(i)
        out["devices"].append({"index": i, "name": p.name, "gcn_arch_name": getattr(p, "gcnArchName", None),
                               "total_memory_bytes": int(p.total_memory),
                               "compute_capability": "%s.%s" % (p.major, p.minor)})
    if out["device_count"] and "--bench" in sys.argv:
        dev = torch.device("cuda", 0)
        n = 8192
        a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
        b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
        for _ in range(3):
            a @ b
        torch.cuda.synchronize()
        iters, t0 = 20, time.perf_counter()
        for _ in range(iters):
            a @ b
        torch.cuda.synchronize()
        secs = time.perf_counter() - t0
        out["gemm_bf16_8192_tflops"] = round(2 * n ** 3 * iters / secs / 1e12, 1)
        src = torch.empty(512 * 1024 * 1024, dtype=torch.uint8, device=dev)
        dst = torch.empty_like(src)
        for _ in range(3):
            dst.copy_(src)
        torch.cuda.synchronize()
        iters, t0 = 20, time.perf_counter()
        for _ in range(iters):
            dst.copy_(src)
        torch.cuda.synchronize()
        secs = time.perf_counter() - t0
        # read + write counted, as AMD Primus node_smoke does
        out["hbm_copy_gbps"] = round(2 * src.numel() * iters / secs / 1e9, 1)
except Exception as exc:
    out["error"] = "%s: %s" % (type(exc).__name__, exc)
print(json.dumps(out))
"""


def probe_torch(bench):
    """PyTorch facts (and micro-benchmarks when asked) from a child interpreter with its own deadline."""
    argv = [sys.executable or "python3", "-c", TORCH_CHILD] + (["--bench"] if bench else [])
    res = run_tool(argv, timeout_s=TORCH_TIMEOUT_S)
    docs = json_documents(res["stdout"])
    data = docs[-1] if docs and isinstance(docs[-1], dict) else {"importable": None}
    data["timed_out"] = res["timed_out"]
    if res["stderr"]:
        data["stderr_tail"] = res["stderr"][-2000:]
    return data


def driver_version(amdsmi_version):
    """DKMS amdgpu version from /sys/module/amdgpu/version, else 'inbox' when the module is loaded without one."""
    dkms = read_text("/sys/module/amdgpu/version")
    if dkms:
        return dkms.strip(), "dkms"
    if read_text("/sys/module/amdgpu/srcversion") or (amdsmi_version or "").lower().startswith("linux"):
        return "inbox", "inbox"
    return None, None


def pick_gpus(static, rocm_smi, rocminfo, nvidia=()):
    """The first tool that enumerated GPUs wins: amd-smi, then rocm-smi, then rocminfo, then nvidia-smi."""
    for source, gpus in (("amd-smi", static), ("rocm-smi", rocm_smi), ("rocminfo", rocminfo), ("nvidia-smi", nvidia)):
        if gpus:
            return source, gpus
    return None, []


def collect(bench=True, deep=False):
    """Run every collector and return the probe document."""
    findings, tools = [], {}

    def tool(name, argv, timeout_s=TOOL_TIMEOUT_S):
        res = run_tool(argv, timeout_s)
        tools[name] = {k: res[k] for k in ("rc", "timed_out", "missing")}
        if res["timed_out"]:
            finding(findings, "TOOL_TIMED_OUT", "%s did not finish within %ss" % (" ".join(argv), timeout_s))
        scan_known_failures(findings, res["stdout"] + "\n" + res["stderr"])
        return res

    version = tool("amd-smi version", ["amd-smi", "version", "--json"])
    versions = parse_amdsmi_version(version["stdout"]) if not version["missing"] else {}
    static = parse_amdsmi_static(tool("amd-smi static", ["amd-smi", "static", "--json"])["stdout"])
    listed = parse_amdsmi_list(tool("amd-smi list", ["amd-smi", "list", "--json"])["stdout"])
    metric_vram = parse_amdsmi_metric_vram(tool("amd-smi metric", ["amd-smi", "metric", "--mem-usage", "--json"])["stdout"])
    topology = parse_amdsmi_topology(tool("amd-smi topology", ["amd-smi", "topology", "--json"])["stdout"])
    partition = parse_amdsmi_partition(tool("amd-smi partition", ["amd-smi", "partition", "--json"])["stdout"])
    rocm_smi, rocminfo = [], []
    if not static:
        rocm_smi = parse_rocm_smi_json(tool("rocm-smi", ["rocm-smi", "--showproductname", "--showmeminfo", "vram", "--json"])["stdout"])
    if not static and not rocm_smi:
        rocminfo = parse_rocminfo(tool("rocminfo", ["rocminfo"])["stdout"])
    nvidia_gpus, nvidia = [], {}
    if not static and not rocm_smi and not rocminfo:
        query = tool("nvidia-smi --query-gpu", ["nvidia-smi", "--query-gpu=" + ",".join(NVIDIA_FIELDS),
                                                "--format=csv,noheader,nounits"])
        if not query["missing"]:
            extra = tool("nvidia-smi --query-gpu extra", ["nvidia-smi", "--query-gpu=" + ",".join(NVIDIA_EXTRA_FIELDS),
                                                          "--format=csv,noheader,nounits"])
            nvidia_gpus = parse_nvidia_gpus(query["stdout"], extra["stdout"])
            nvidia = parse_nvidia_smi_header(tool("nvidia-smi", ["nvidia-smi"])["stdout"])
            nvcc = tool("nvcc --version", ["nvcc", "--version"])
            nvidia["nvcc_cuda_version"] = None if nvcc["missing"] else parse_nvcc_version(nvcc["stdout"])
            if not nvidia.get("driver_version") and nvidia_gpus:
                nvidia["driver_version"] = nvidia_gpus[0].get("driver_version")
    source, gpus = pick_gpus(static, rocm_smi, rocminfo, nvidia_gpus)
    amd_gpus = [] if source == "nvidia-smi" else gpus
    by_index = {g.get("index"): g for g in listed}
    for g in gpus:
        extra = by_index.get(g.get("index"), {})
        if g.get("partition_id") is None:
            g["partition_id"] = extra.get("partition_id")
        if not g.get("vram_bytes") and metric_vram.get(g.get("index")):
            g["vram_bytes"] = metric_vram[g.get("index")]
        for mode, key in (("compute", "compute_partition"), ("memory", "memory_partition")):
            if g.get(key):
                partition[mode] = sorted(set(partition[mode]) | {str(g[key]).upper()})

    rocm_file = read_text("/opt/rocm/.info/version")
    drv, drv_kind = driver_version(versions.get("amdgpu_version"))
    cmdline = (read_text("/proc/cmdline") or "").strip()
    os_release = parse_os_release(read_text("/etc/os-release"))
    kfd_present = os.path.exists(sysroot_path("/dev/kfd"))
    torch_facts = probe_torch(bench)
    deep_results = deep_checks(gpus) if deep else {}

    if not gpus and not (torch_facts.get("device_count") or 0):
        finding(findings, "NO_GPU_VISIBLE", "no GPU was enumerated by amd-smi, rocm-smi, rocminfo, nvidia-smi or PyTorch")
    if any(g.get("pci_device_id") in VF_DEVICE_IDS for g in amd_gpus):
        finding(findings, "SRIOV_VF", "GPUs are SR-IOV virtual functions (PCI 0x74b5): HIP enumeration must be checked separately")
    if amd_gpus and "iommu=pt" not in cmdline.split():
        finding(findings, "MISSING_IOMMU_PT", 'kernel command line lacks "iommu=pt" (RCCL warns of instability or hangs)', cmdline)
    if drv_kind == "inbox":
        finding(findings, "INBOX_DRIVER", "amdgpu is the kernel's in-box driver (no DKMS version), outside AMD's validated driver window")
    # On a host nvidia-smi enumerated, a CUDA PyTorch is expected (the verdict compares the GPUs with the quote).
    if torch_facts.get("importable") and torch_facts.get("hip") is None and torch_facts.get("cuda") and not nvidia_gpus:
        finding(findings, "NOT_AMD", "PyTorch is a CUDA build (torch.version.cuda=%s): the visible GPUs are not AMD" % torch_facts.get("cuda"))
    if torch_facts.get("timed_out"):
        finding(findings, "TORCH_TIMED_OUT", "the PyTorch probe did not finish within %ss" % TORCH_TIMEOUT_S)
    scan_known_failures(findings, torch_facts.get("error", "") + "\n" + torch_facts.get("stderr_tail", ""))
    if amd_gpus and torch_facts.get("importable") and torch_facts.get("hip") and not torch_facts.get("device_count"):
        finding(findings, "NO_HIP_GPUS", "amd-smi sees GPUs but PyTorch (HIP) enumerates none")

    return {
        "schema_version": SCHEMA_VERSION,
        "collected_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": {"hostname": platform.node(), "kernel_release": platform.release(), "machine": platform.machine(),
                 "os_id": os_release.get("ID"), "os_version_id": os_release.get("VERSION_ID"),
                 "os_pretty_name": os_release.get("PRETTY_NAME"), "kernel_cmdline": cmdline[:4096],
                 "kfd_present": kfd_present, "python": platform.python_version()},
        "rocm": {"version_file": rocm_file.strip() if rocm_file else None,
                 "amdsmi_rocm_version": versions.get("rocm_version"), "amdsmi_version": versions.get("amdsmi_version"),
                 "amdgpu_driver_version": drv, "amdgpu_driver_kind": drv_kind},
        "nvidia": nvidia,
        "gpus": gpus,
        "gpu_source": source,
        "partition": partition,
        "links": topology,
        "torch": torch_facts,
        "deep": deep_results,
        "tools": tools,
        "findings": findings,
    }


def main(argv):
    """Print the probe document; never raise (a crash is reported inside the JSON)."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop_tools_and_exit)
    try:
        doc = collect(bench="--no-bench" not in argv, deep="--deep" in argv)
    except Exception as exc:  # the runner must always get a JSON document back
        doc = {"schema_version": SCHEMA_VERSION, "error": "%s: %s" % (type(exc).__name__, exc),
               "findings": [{"code": "PROBE_CRASHED", "message": str(exc), "evidence": ""}]}
    sys.stdout.write(json.dumps(doc, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

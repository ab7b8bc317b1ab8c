"""Build a fake GPU host for the probe: stand-in amd-smi/rocm-smi/rocminfo/nvidia-smi on PATH and a sysroot.

The values are the real ones captured in tests/fixtures/probe_outputs/ (each noted where used);
the variants re-shape them the way real tools do (amd-smi 26 `gpu_data` wrapper, duplicated
documents, CPX partitions, fewer GPUs, another device id).
"""
import json
import os
import re
import stat
from pathlib import Path

PROBE_OUTPUTS = Path(__file__).parent / "fixtures" / "probe_outputs"

# amd-smi_MI300X_rocm-blog_2024-09-17.txt: the 8 BDFs of its topology table, device id 0x74a1,
# market name "MI300X-O", `static --json | jq '.[0]["vram"]'` = {"type": "HBM", "vendor": "N/A", "size": {"value": 196592, "unit": "MB"}}.
MI300X_BDFS = ["0000:05:00.0", "0000:26:00.0", "0000:46:00.0", "0000:65:00.0",
               "0000:85:00.0", "0000:a6:00.0", "0000:c6:00.0", "0000:e5:00.0"]
MI300X_VRAM = {"type": "HBM", "vendor": "N/A", "size": {"value": 196592, "unit": "MB"}}
# rocminfo_MI300X_ROCm6.2.3_ROCm-issue-4021_excerpt.txt: ROCm 6.2.3, "ROCk module version 6.8.5", Ubuntu 22.04.5.
OS_RELEASE_UBUNTU_2204 = 'NAME="Ubuntu"\nVERSION_ID="22.04"\nPRETTY_NAME="Ubuntu 22.04.5 LTS"\nID=ubuntu\n'
# reference §2.1 #5: `amd-smi version --json` keys tool/version/amdsmi_library_version/rocm_version (+ amdgpu_version).
AMDSMI_VERSION = {"tool": "AMDSMI Tool", "version": "24.6.3", "amdsmi_library_version": "24.6.3",
                  "rocm_version": "6.2.3", "amdgpu_version": "6.8.5"}
CMDLINE_OK = "BOOT_IMAGE=/vmlinuz-5.15.0-164-generic root=/dev/sda1 ro pci=realloc=off amd_iommu=on iommu=pt"


def static_record(i: int, bdf: str, device_id: str = "0x74a1", market: str = "MI300X-O", vram=MI300X_VRAM,
                  gfx: str = "gfx942", partition: dict | None = None) -> dict:
    """One `amd-smi static --json` GPU record."""
    record = {"gpu": i,
              "asic": {"market_name": market, "vendor_id": "0x1002", "device_id": device_id, "rev_id": "0x00",
                       "target_graphics_version": gfx},
              "bus": {"bdf": bdf, "max_pcie_width": 16, "max_pcie_speed": "32 GT/s", "slot_type": "OAM"},
              "driver": {"name": "amdgpu", "version": "6.8.5"},
              "vram": vram}
    if partition:
        record["partition"] = partition
    return record


def topology(bdfs: list[str], disabled: set[tuple[int, int]] = frozenset()) -> list[dict]:
    """`amd-smi topology --json` (amd-smi >= 24.7 schema): MI300X all-to-all XGMI, weight 15, 1 hop."""
    out = []
    for i, bdf in enumerate(bdfs):
        links = []
        for j, other in enumerate(bdfs):
            if i == j:
                links.append({"gpu": j, "bdf": other, "weight": 0, "link_status": "ENABLED", "link_type": "SELF",
                              "num_hops": 0, "bandwidth": "N/A"})
            else:
                status = "DISABLED" if (i, j) in disabled or (j, i) in disabled else "ENABLED"
                links.append({"gpu": j, "bdf": other, "weight": 15, "link_status": status, "link_type": "XGMI",
                              "num_hops": 1, "bandwidth": "50000-100000"})
        out.append({"gpu": i, "bdf": bdf, "links": links})
    return out


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _executable(path: Path, body: str) -> None:
    _write(path, body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def build_host(root: Path, amd_smi: dict[str, str] | None, *, rocm_smi: str | None = None,
               rocminfo: str | None = None, rocm_version: str = "6.2.3-116",
               cmdline: str = CMDLINE_OK, dkms_version: str | None = "6.8.5", hang: bool = False,
               extra_tools: dict[str, str] | None = None) -> dict:
    """Write the host's files under root; return the environment the probe must run with."""
    root.mkdir(parents=True, exist_ok=True)
    bindir, sysroot = root / "bin", root / "sysroot"
    if amd_smi is not None:
        for sub, text in amd_smi.items():
            _write(root / "amd-smi" / f"{sub}.out", text)
        hang_line = "exec sleep 600\n" if hang else ""
        _executable(bindir / "amd-smi", "#!/bin/sh\n# stand-in amd-smi: prints the captured output for the subcommand\n"
                    f"{hang_line}out='{root}/amd-smi/'\"$1\".out\n"
                    "[ -f \"$out\" ] && exec cat \"$out\"\necho \"amd-smi: unknown command $1\" >&2\nexit 2\n")
    for name, text in (("rocm-smi", rocm_smi), ("rocminfo", rocminfo), *(extra_tools or {}).items()):
        if text is not None:
            _write(root / f"{name}.out", text)
            # Each call's arguments are logged (argv.log), so a test can check the command the probe ran.
            _executable(bindir / name, f"#!/bin/sh\necho \"{name} $*\" >> '{root}/argv.log'\nexec cat '{root}/{name}.out'\n")
    _write(sysroot / "etc/os-release", OS_RELEASE_UBUNTU_2204)
    _write(sysroot / "proc/cmdline", cmdline + "\n")
    if rocm_version:
        _write(sysroot / "opt/rocm/.info/version", rocm_version + "\n")
    if dkms_version:
        _write(sysroot / "sys/module/amdgpu/version", dkms_version + "\n")
    bindir.mkdir(exist_ok=True)
    return {"PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin", "PROBE_SYSROOT": str(sysroot)}


def amd_smi_outputs(records: list[dict], *, v26: bool = False, duplicated: bool = False,
                    version: dict = AMDSMI_VERSION, partition_text: str = "", links: list | None = None) -> dict[str, str]:
    """The amd-smi subcommand outputs for a set of static records (list shape, or gpu_data from v26)."""
    def shape(rows):
        text = json.dumps({"gpu_data": rows} if v26 else rows, indent=4)
        return text + "\n" + text if duplicated else text

    listed = [{"gpu": r["gpu"], "bdf": r["bus"]["bdf"], "uuid": "N/A",
               "partition_id": (r.get("partition") or {}).get("partition_id", 0)} for r in records]
    metric = [{"gpu": r["gpu"], "mem_usage": {"total_vram": r["vram"]["size"], "used_vram": {"value": 283, "unit": "MB"}}}
              for r in records]
    return {"version": json.dumps([version]), "static": shape(records),
            "list": json.dumps(listed, indent=4),  # list --json stays a list on 26.x (reference §2.1 #1)
            "metric": shape(metric),
            "topology": shape(links if links is not None else topology([r["bus"]["bdf"] for r in records])),
            "partition": partition_text or "[]"}


def mi300x_host(root: Path, count: int = 8, **kwargs) -> dict:
    """An MI300X node with count GPUs (pre-26 amd-smi), plus any build_host/amd_smi_outputs overrides."""
    shape_keys = {k: kwargs.pop(k) for k in ("v26", "duplicated") if k in kwargs}
    device_id = kwargs.pop("device_id", "0x74a1")
    records = [static_record(i, MI300X_BDFS[i], device_id=device_id) for i in range(count)]
    return build_host(root, amd_smi_outputs(records, **shape_keys), **kwargs)


def cpx_host(root: Path) -> dict:
    """One MI300X in CPX/NPS4: 8 logical devices on one BDF, each with an eighth of the VRAM."""
    part_vram = {"type": "HBM", "vendor": "N/A", "size": {"value": 196592 // 8, "unit": "MB"}}
    records = [static_record(i, MI300X_BDFS[0], vram=part_vram,
                             partition={"compute_partition": "CPX", "memory_partition": "NPS4", "partition_id": i})
               for i in range(8)]
    return build_host(root, amd_smi_outputs(records, links=[]))


# nvidia-smi_H100-SXM-x8_thamada-nvidia-smi_03fbe6e.txt: the plain table (index, name, bus id, MiB,
# driver/CUDA banner) and -q (PCI "Device Id : 0x233010DE", "MIG Mode Current : Disabled", ECC 0).
NVIDIA_H100_CAPTURE = "nvidia-smi_H100-SXM-x8_thamada-nvidia-smi_03fbe6e.txt"
NVIDIA_TABLE_ROW = re.compile(r"^\|\s+(\d+)\s+(.+?)\s+(?:On|Off)\s+\|\s+([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.\d)\s")
NVIDIA_MEMORY = re.compile(r"\d+MiB\s*/\s*(\d+)MiB")


def nvidia_capture(name: str = NVIDIA_H100_CAPTURE) -> dict[str, str]:
    """The verbatim plain table and -q excerpt of a captured nvidia-smi fixture file."""
    text = (PROBE_OUTPUTS / name).read_text(encoding="utf-8")
    def part(title):
        start = text.index(f"## {title}\n") + len(title) + 4
        return text[start:text.index(f"## end {title}", start)]
    return {"table": part("nvidia-smi"), "query": part("nvidia-smi -q")}


def nvidia_rows(capture: dict[str, str]) -> list[dict]:
    """Per-GPU values read off the captured table, plus the -q facts every GPU of the node shares."""
    lines = capture["table"].splitlines()
    device_id = re.search(r"Device Id\s+:\s+(0x[0-9A-Fa-f]+)", capture["query"]).group(1)
    driver = re.search(r"Driver Version:\s+(\S+)", capture["table"]).group(1)
    rows = []
    for i, line in enumerate(lines):
        m = NVIDIA_TABLE_ROW.match(line)
        if m:
            rows.append({"index": m.group(1), "name": m.group(2), "pci.bus_id": m.group(3), "pci.device_id": device_id,
                         "memory.total": NVIDIA_MEMORY.search(lines[i + 1]).group(1), "driver_version": driver})
    return rows


def nvidia_host(root: Path, count: int | None = None, *, name: str | None = None, ecc_uncorrected: int = 0,
                mig: str = "Disabled", extra_fields_supported: bool = True,
                capture: str = NVIDIA_H100_CAPTURE, **host) -> dict:
    """An NVIDIA node whose stand-in nvidia-smi answers from the captured outputs (first count GPUs).

    --query-gpu rows are the captured table's values in the shape `--format=csv,noheader,nounits`
    prints (fields joined by ", ", memory in MiB); name overrides the model name (a different GPU),
    and the extra fields (compute_cap 9.0 is Hopper's, MIG mode and ECC count from -q) can be made
    unsupported, as on an old driver that rejects an unknown field. host: build_host options (cmdline).
    """
    cap = nvidia_capture(capture)
    rows = nvidia_rows(cap)[:count]
    fields = ("index", "name", "pci.bus_id", "pci.device_id", "memory.total", "driver_version")
    core = "".join(", ".join(name if (name and f == "name") else r[f] for f in fields) + "\n" for r in rows)
    extra = "".join(f"{r['index']}, 9.0, {mig}, {ecc_uncorrected}\n" for r in rows)
    nvcc = (PROBE_OUTPUTS / "nvcc_version_CUDA12.8_ollama-issue-9031.txt").read_text(encoding="utf-8")
    env = build_host(root, None, rocm_version="", dkms_version=None, extra_tools={"nvcc": nvcc}, **host)
    _write(root / "nvidia-smi" / "table.out", cap["table"])
    _write(root / "nvidia-smi" / "core.out", core)
    _write(root / "nvidia-smi" / "extra.out", extra)
    extra_case = (f"  --query-gpu=index,compute_cap*) exec cat '{root}/nvidia-smi/extra.out' ;;\n"
                  if extra_fields_supported else
                  "  --query-gpu=index,compute_cap*) echo 'Field \"compute_cap\" is not a valid field to query.' >&2; exit 2 ;;\n")
    _executable(root / "bin" / "nvidia-smi",
                "#!/bin/sh\n# stand-in nvidia-smi: answers from the captured outputs\ncase \"$1\" in\n"
                f"  --query-gpu=index,name,*) exec cat '{root}/nvidia-smi/core.out' ;;\n{extra_case}"
                f"  '') exec cat '{root}/nvidia-smi/table.out' ;;\n"
                "  *) echo \"nvidia-smi: unexpected arguments $*\" >&2; exit 2 ;;\nesac\n")
    return env


def env_for(fake_env: dict) -> dict:
    """The full environment for running the probe locally against a fake host."""
    env = dict(os.environ)
    env.update(fake_env)
    return env

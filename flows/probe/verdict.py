"""What validate-host and device-check read off a probe document before the SQL decides: the GPU catalog, identity, printable text.

The checks themselves are the warehouse's SQL models (sql/models/intermediate/int_validation_*_checks,
run on one record by provider_eval/validation_sql.py); nothing here decides pass or fail.
"""
import csv
import re
from dataclasses import dataclass
from pathlib import Path

from flows.ingest import names
from provider_eval.paths import REFERENCE_DIR

PROBE_SCHEMA = "provider-eval.probe/1"
NVIDIA = "NVIDIA"


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

    @classmethod
    def load(cls, reference_dir: Path = REFERENCE_DIR) -> "Reference":
        """Read gpus.csv."""
        return cls(_read_csv("gpus.csv", reference_dir))

    def models_for_device_id(self, device_id: str) -> list[str]:
        """Catalog models whose PCI device ids (PF or VF) include this one."""
        return [g["gpu_model"] for g in self.gpus
                if device_id in re.findall(r"0x[0-9a-f]{4}", (g.get("pci_device_ids") or "").lower())]

    def models_for_gfx(self, gfx: str) -> list[str]:
        """Catalog models built on this LLVM target."""
        return [g["gpu_model"] for g in self.gpus if (g.get("llvm_target") or "").split(" ")[0] == gfx]

    def catalog(self, model: str) -> dict | None:
        """The catalog row of a model."""
        return next((g for g in self.gpus if g["gpu_model"] == model), None)


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

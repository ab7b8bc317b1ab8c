"""skypilot-catalog: a SkyPilot catalog vms.csv (one cloud per file, named in sources.yaml defaults)."""
import ast
import csv
import io

from flows.ingest.adapters.base import FileContext, FileRejected, ParseResult
from flows.ingest.adapters.catalog_records import (
    not_an_offer, read_text, record, to_result, vram_scope_for)

REQUIRED = {"InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region", "GpuInfo", "SpotPrice"}
OPTIONAL = {"vCPUs", "MemoryGiB", "AvailabilityZone", "Generation", "Arch"}
MIB = 2**20
# Below this a "SizeInMiB" figure cannot be MiB (no GPU has < 1 GiB); the RunPod catalog writes 192
# there for a 192 GB MI300X, so such a figure is read as GB.
MIB_FLOOR = 1024


def _lower_keys(value):
    """GpuInfo key case varies by cloud ('Gpus' vs 'gpus'): compare keys case-folded."""
    if isinstance(value, dict):
        return {str(k).lower(): _lower_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_lower_keys(v) for v in value]
    return value


def gpu_info(text: str | None) -> dict | None:
    """The GpuInfo cell: a Python-repr dict, read with ast.literal_eval (literals only, never eval)."""
    if not text:
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise ValueError(f"GpuInfo is not a Python literal: {text[:80]!r}") from None
    if not isinstance(value, dict):
        raise ValueError("GpuInfo is not a mapping")
    return _lower_keys(value)


def memory_gb(info: dict) -> float | None:
    """Stated GPU memory in GB from GpuInfo's first GPU (MiB, or GB when the figure is too small for MiB)."""
    gpus = info.get("gpus") or [{}]
    size = ((gpus[0] or {}).get("memoryinfo") or {}).get("sizeinmib")
    if not isinstance(size, (int, float)) or isinstance(size, bool) or size <= 0:
        return None
    return float(size) if size < MIB_FLOOR else size * MIB / 1e9


def _whole(text: str | None) -> str | None:
    """'8.0' → '8' (SkyPilot writes float counts); anything else is left for the count rule."""
    if text and text.endswith(".0") and text[:-2].isdigit():
        return text[:-2]
    return text


def _records(row: dict, line: int) -> list[dict]:
    if not row.get("AcceleratorName"):
        return [not_an_offer(line, row, "NOT_A_GPU_OFFER", f"{row.get('InstanceType')} has no accelerator")]
    try:
        info = gpu_info(row.get("GpuInfo")) or {}
    except ValueError as exc:
        return [not_an_offer(line, row, "GPUINFO_MALFORMED", str(exc))]
    count = _whole(row.get("AcceleratorCount"))
    vram = memory_gb(info)
    try:
        gpus_per_node = float(count) if count else None
    except ValueError:
        gpus_per_node = None
    # One instance type is priced per region: the region is part of the offer's identity.
    offer_id = f"{row['InstanceType']}@{row['Region']}" if row.get("InstanceType") and row.get("Region") \
        else row.get("InstanceType")
    common = dict(offer_id=offer_id, gpu_model=row.get("AcceleratorName"),
                  gpus_per_node=count, price_scope="per_node", price_unit="hour", currency="USD",
                  region=row.get("Region"), vram_gb=vram,
                  vram_scope=vram_scope_for(row.get("AcceleratorName"), vram, gpus_per_node))
    out = [record(line, row, **common, billing_model="on_demand", price=row.get("Price"))]
    spot = row.get("SpotPrice")
    # An empty or 0.00 SpotPrice means "no spot offer", not a free one.
    try:
        has_spot = bool(spot) and float(spot) != 0
    except ValueError:
        has_spot = True  # a non-number is kept so the price rules name it
    if has_spot:
        out.append(record(line, row, **common, billing_model="spot", price=spot))
    return out


def parse(ctx: FileContext) -> ParseResult:
    """Read a vms.csv by header name (column order differs between clouds)."""
    text = read_text(ctx, "catalog CSV").removeprefix("\ufeff")
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    try:
        header = [h.strip() for h in reader.fieldnames or []]
    except csv.Error as exc:
        raise FileRejected("CSV_MALFORMED", f"line {reader.line_num}: {exc}") from None
    missing = REQUIRED - set(header)
    if missing:
        raise FileRejected("SCHEMA_DRIFT", f"missing column(s) {sorted(missing)}")
    reader.fieldnames = header
    records = []
    try:
        for row in reader:
            line = reader.line_num
            cells = {k: (v.strip() or None) if isinstance(v, str) else v for k, v in row.items() if k is not None}
            if None in row or any(v is None for v in row.values()):
                records.append(not_an_offer(line, {**cells, "_extra": row.get(None)}, "ROW_RAGGED",
                                            f"line {line} has a different field count from the header"))
                continue
            records += _records(cells, line)
    except csv.Error as exc:
        raise FileRejected("CSV_MALFORMED", f"line {reader.line_num}: {exc}") from None
    return to_result(records, ctx)

"""digitalocean-sizes: DigitalOcean /v2/sizes; GPU droplets priced per droplet, hourly and monthly."""
from flows.ingest.adapters.base import FileContext, ParseResult
from flows.ingest.adapters.catalog_records import (
    each_record, expect_list, joined, not_an_offer, read_json, record, to_result, vram_scope_for)
from flows.ingest.adapters.fields import HOURS_PER_MONTH

GIB = 2**30


def _vram_gb(gpu_info: dict) -> float | None:
    """gpu_info.vram as decimal GB (DigitalOcean states it with a unit, usually gib)."""
    vram = gpu_info.get("vram") if isinstance(gpu_info.get("vram"), dict) else {}
    amount, unit = vram.get("amount"), str(vram.get("unit", "")).lower()
    if not isinstance(amount, (int, float)) or isinstance(amount, bool):
        return None
    factor = {"gib": GIB / 1e9, "gb": 1.0, "mib": 2**20 / 1e9, "tib": 2**40 / 1e9}.get(unit)
    return None if factor is None else amount * factor


def _records(size: dict, row: int) -> list[dict]:
    gpu = size.get("gpu_info")
    if not isinstance(gpu, dict):
        return [not_an_offer(row, size, "NOT_A_GPU_OFFER", f"size {size.get('slug')!r} has no gpu_info")]
    vram = _vram_gb(gpu)
    common = dict(
        offer_id=size.get("slug"), gpu_model=gpu.get("model"), gpus_per_node=gpu.get("count"),
        price_scope="per_node", currency="USD", region=joined(size.get("regions")),
        vram_gb=vram, vram_scope=vram_scope_for(gpu.get("model"), vram, gpu.get("count")),
        notes=size.get("description"),
    )
    out = [record(row, size, **common, billing_model="on_demand", price=size.get("price_hourly"),
                  price_unit="hour")]
    if size.get("price_monthly") is not None:
        out.append(record(row, size, **common, billing_model="monthly", price=size.get("price_monthly"),
                          price_unit="month", min_term_hours=HOURS_PER_MONTH))
    return out


def parse(ctx: FileContext) -> ParseResult:
    """Read a /v2/sizes response into quote observations (one per size × hourly/monthly)."""
    sizes = expect_list(read_json(ctx), "sizes", "sizes")
    return to_result(each_record(sizes, _records, "size"), ctx)

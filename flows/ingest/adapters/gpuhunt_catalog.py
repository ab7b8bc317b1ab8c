"""gpuhunt-catalog: a dstack gpuhunt catalog CSV; price is $/h per instance, gpu_memory GB per GPU."""
import csv
import io

from flows.ingest.adapters.base import FileContext, FileRejected, ParseResult
from flows.ingest.adapters.catalog_records import not_an_offer, read_text, record, to_result

REQUIRED = {"instance_name", "location", "price", "gpu_count", "gpu_name", "spot"}
OPTIONAL = {"provider", "cpu", "memory", "gpu_memory", "gpu_vendor", "disk_size", "cpu_arch", "flags",
            "provider_data"}
SPOT = {"true": "spot", "false": "on_demand"}


def _offer_id(row: dict) -> str | None:
    """The instance name, qualified by location when there is one (prices differ by location)."""
    if row.get("instance_name") and row.get("location"):
        return f"{row['instance_name']}@{row['location']}"
    return row.get("instance_name")


def _records(row: dict, line: int) -> list[dict]:
    if not row.get("gpu_name") or row.get("gpu_count") in (None, "0"):
        return [not_an_offer(line, row, "NOT_A_GPU_OFFER", f"{row.get('instance_name')} has no GPU")]
    spot = str(row.get("spot") or "").lower()
    billing = SPOT.get(spot, row.get("spot"))  # anything else is left for BILLING_MODEL_UNKNOWN to name
    return [record(line, row, offer_id=_offer_id(row),
                   provider=row.get("provider"), gpu_model=row.get("gpu_name"), gpus_per_node=row.get("gpu_count"),
                   price=row.get("price"), price_unit="hour", price_scope="per_node", billing_model=billing,
                   currency="USD", region=row.get("location"), vram_gb=row.get("gpu_memory"),
                   vram_scope="per_gpu", notes=f"flags: {row['flags']}" if row.get("flags") else None)]


def parse(ctx: FileContext) -> ParseResult:
    """Read a catalog CSV by header name; each row is one offer (spot is a separate row)."""
    reader = csv.DictReader(io.StringIO(read_text(ctx, "catalog CSV").removeprefix("\ufeff"), newline=""), strict=True)
    try:
        header = [h.strip() for h in reader.fieldnames or []]
        missing, unknown = REQUIRED - set(header), set(header) - REQUIRED - OPTIONAL
        if missing or unknown:
            raise FileRejected("SCHEMA_DRIFT", f"missing column(s) {sorted(missing)}; unknown column(s) {sorted(unknown)}")
        reader.fieldnames = header
        records = []
        for row in reader:
            cells = {k: (v.strip() or None) if isinstance(v, str) else v for k, v in row.items() if k is not None}
            if None in row or any(v is None for v in row.values()):
                records.append(not_an_offer(reader.line_num, {**cells, "_extra": row.get(None)}, "ROW_RAGGED",
                                            f"line {reader.line_num} has a different field count from the header"))
                continue
            records += _records(cells, reader.line_num)
    except csv.Error as exc:
        raise FileRejected("CSV_MALFORMED", f"line {reader.line_num}: {exc}") from None
    return to_result(records, ctx)

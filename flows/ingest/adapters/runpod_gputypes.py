"""runpod-gputypes: RunPod GraphQL `gpuTypes` response; prices per GPU-hour by tier and commitment."""
from flows.ingest.adapters.base import FileContext, FileRejected, ParseResult
from flows.ingest.adapters.catalog_records import each_record, not_an_offer, read_json, record, to_result
from flows.ingest.adapters.fields import HOURS_PER_MONTH

# Field → (billing model, tier, commitment term in hours). RunPod prices each per GPU-hour.
PRICE_FIELDS = {
    "securePrice": ("on_demand", "secure", None),
    "communityPrice": ("on_demand", "community", None),
    "secureSpotPrice": ("spot", "secure", None),
    "communitySpotPrice": ("spot", "community", None),
    # Savings plans: a per-GPU-hour rate for a term paid up front (Secure Cloud only).
    "oneWeekPrice": ("reserved", "secure", 168),
    "oneMonthPrice": ("reserved", "secure", HOURS_PER_MONTH),
    "threeMonthPrice": ("reserved", "secure", 3 * HOURS_PER_MONTH),
    "sixMonthPrice": ("reserved", "secure", 6 * HOURS_PER_MONTH),
}


def _offered(value) -> bool:
    """RunPod writes 0 or null where a tier does not offer the GPU: no option, not a free one."""
    return value is not None and not (isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0)


def _records(gpu: dict, row: int) -> list[dict]:
    common = dict(offer_id=gpu.get("id"), gpu_model=gpu.get("id"), gpus_per_node=1, price_scope="per_gpu",
                  price_unit="hour", currency="USD", vram_gb=gpu.get("memoryInGb"), vram_scope="per_gpu",
                  notes=f"displayName {gpu.get('displayName')}")
    out = []
    for field, (billing, tier, term) in PRICE_FIELDS.items():
        if _offered(gpu.get(field)):
            out.append(record(row, gpu, **common, billing_model=billing, tier=tier,
                              commitment_term_hours=term, price=gpu.get(field)))
    if not out:
        return [not_an_offer(row, gpu, "NOT_AVAILABLE", f"GPU type {gpu.get('id')!r} has no price in any tier")]
    return out


def parse(ctx: FileContext) -> ParseResult:
    """Read {"data": {"gpuTypes": [...]}} (or the bare gpuTypes list) into quote observations."""
    doc = read_json(ctx)
    if isinstance(doc, dict) and doc.get("errors"):
        raise FileRejected("API_ERROR", f"GraphQL errors: {str(doc['errors'])[:200]}")
    data = doc.get("data") if isinstance(doc, dict) else None
    types = (data.get("gpuTypes") if isinstance(data, dict) else None) if isinstance(doc, dict) else doc
    if not isinstance(types, list):
        raise FileRejected("SCHEMA_DRIFT", "expected data.gpuTypes to be a list")
    return to_result(each_record(types, _records, "GPU type"), ctx)

"""vastai-offers: `vastai search offers --raw` JSON; dph_total is $/h for the whole machine slice."""
from flows.ingest.adapters.base import FileContext, FileRejected, ParseResult
from flows.ingest.adapters.catalog_records import each_record, not_an_offer, read_json, record, to_result

MIB = 2**20


def _records(offer: dict, row: int) -> list[dict]:
    if not offer.get("gpu_name") or not offer.get("num_gpus"):
        return [not_an_offer(row, offer, "NOT_A_GPU_OFFER", f"offer {offer.get('id')} has no GPU")]
    ram = offer.get("gpu_ram")
    vram = ram * MIB / 1e9 if isinstance(ram, (int, float)) and not isinstance(ram, bool) else None
    notes = "; ".join(f"{k} {offer[k]}" for k in ("reliability", "reliability2", "driver_version", "machine_id")
                      if offer.get(k) is not None)
    common = dict(offer_id=offer.get("id"), gpu_model=offer.get("gpu_name"), gpus_per_node=offer.get("num_gpus"),
                  price_scope="per_node", price_unit="hour", currency="USD", region=offer.get("geolocation"),
                  # gpu_ram is MiB per GPU; storage in $/GB-month; traffic in $/GB (upload = egress).
                  vram_gb=vram, vram_scope="per_gpu", storage_per_gb_month=offer.get("storage_cost"),
                  egress_per_gb=offer.get("inet_up_cost"), notes=notes or None)
    out = [record(row, offer, **common, billing_model="on_demand", price=offer.get("dph_total"))]
    if offer.get("min_bid"):
        # Interruptible instances are bid for; min_bid is the lowest bid that rents the same slice.
        out.append(record(row, offer, **common, billing_model="spot", price=offer.get("min_bid")))
    return out


def parse(ctx: FileContext) -> ParseResult:
    """Read the offers list (bare, or under 'offers' as the REST API returns it)."""
    doc = read_json(ctx)
    offers = doc.get("offers") if isinstance(doc, dict) else doc
    if not isinstance(offers, list):
        raise FileRejected("SCHEMA_DRIFT", "expected a list of offers (or an 'offers' list)")
    return to_result(each_record(offers, _records, "offer"), ctx)

"""hotaisle-available: Hot Aisle's available-VM list; OnDemandPrice in US cents per VM-hour."""
from decimal import Decimal

from flows.ingest.adapters.base import FileContext, FileRejected, ParseResult
from flows.ingest.adapters.catalog_records import each_record, not_an_offer, read_json, record, to_result


def _price_dollars(cents) -> str | None:
    """Cents → dollars exactly (199 → 1.99); non-numbers pass through for the price rules to name."""
    if isinstance(cents, bool) or not isinstance(cents, (int, float)):
        return None if cents is None else str(cents)
    return format(Decimal(repr(cents)) / 100, "f")


def _records(vm: dict, row: int) -> list[dict]:
    specs = vm.get("Specs") if isinstance(vm.get("Specs"), dict) else {}
    listed = specs.get("gpus")
    gpus = [g for g in listed if isinstance(g, dict)] if isinstance(listed, list) else []
    if not gpus:
        return [not_an_offer(row, vm, "NOT_A_GPU_OFFER", "Specs.gpus is empty")]
    if len({g.get("model") for g in gpus}) > 1:
        return [not_an_offer(row, vm, "GPU_MIXED", "one VM lists more than one GPU model")]
    count = sum(g["count"] for g in gpus if isinstance(g.get("count"), int) and not isinstance(g["count"], bool))
    gpu_model = gpus[0].get("model")
    cpus = specs.get("cpus") if isinstance(specs.get("cpus"), dict) else {}  # only read for the notes
    # Hot Aisle lists no VM id: the shape (GPUs, cores, RAM) names the offer.
    offer_id = f"{count}x{gpu_model}-{specs.get('cpu_cores')}c-{specs.get('ram_capacity')}B"
    return [record(row, vm, offer_id=offer_id, gpu_model=gpu_model, gpus_per_node=count or None,
                   price=_price_dollars(vm.get("OnDemandPrice")), price_unit="hour", price_scope="per_node",
                   billing_model="on_demand", currency="USD",
                   notes=f"OnDemandPrice {vm.get('OnDemandPrice')} cents/h; CPU {cpus.get('model')}")]


def parse(ctx: FileContext) -> ParseResult:
    """Read an available-VM list into quote observations; a `null` body means none are available."""
    doc = read_json(ctx)
    if doc is None:
        return to_result([], ctx)
    if not isinstance(doc, list):
        raise FileRejected("SCHEMA_DRIFT", "expected a top-level list of VMs (or null)")
    return to_result(each_record(doc, _records, "VM"), ctx)

"""vultr-plans: Vultr /v2/plans and /v2/plans-metal; GPU facts partly only in the plan id."""
import re

from flows.ingest.adapters.base import FileContext, FileRejected, ParseResult
from flows.ingest.adapters.catalog_records import (
    catalog_model, each_record, joined, not_an_offer, number, read_json, record, to_result)
from flows.ingest.adapters.fields import HOURS_PER_MONTH, catalog_memory_gb

# Bare metal: vbm-<cores>c-<ram>gb-<gpu count>-<gpu>-gpu, e.g. vbm-256c-2048gb-8-mi300x-gpu.
METAL_ID = re.compile(r"^vbm-\d+c-\d+gb-(?P<count>\d+)-(?P<gpu>[a-z0-9]+)-gpu$", re.I)
# Cloud GPU: vcg-<gpu>-<cores>c-<ram>g-<vram>vram, e.g. vcg-mi325x-252c-2872g-1536vram.
VM_ID = re.compile(r"^vcg-(?P<gpu>[a-z0-9]+)-\d+c-\d+g-(?P<vram>\d+)vram$", re.I)


def _gpu_facts(plan: dict) -> tuple[str | None, int | None, float | None, str]:
    """(GPU name, GPU count, stated VRAM GB per node, how the count was found) for one plan."""
    pid = str(plan.get("id", ""))
    if m := METAL_ID.match(pid):
        return m["gpu"], int(m["count"]), None, "count from the plan id"
    if m := VM_ID.match(pid):
        name = plan.get("gpu_type") or m["gpu"]
        stated = plan.get("gpu_vram_gb")
        vram = number(m["vram"] if stated is None else stated)
        if vram is None:
            return name, None, None, f"gpu_vram_gb {stated!r} is not a number"
        per_gpu = catalog_memory_gb().get(catalog_model(name) or "")
        # The id states total VRAM only; a whole number of catalog GPUs is the GPU count, else a
        # fraction of one GPU (vGPU slice), which is not a rentable GPU and is named as such.
        if per_gpu and vram >= per_gpu * 0.9:
            count = vram / per_gpu
            return name, (round(count) if abs(count - round(count)) < 0.05 else None), vram, \
                f"count = {vram:g} GB VRAM / {per_gpu:g} GB per {catalog_model(name)} (catalog)"
        if per_gpu:
            return name, None, vram, f"{vram:g} GB VRAM is a fraction of one {catalog_model(name)}"
        return name, 1, vram, "count unknown: the GPU is not in the catalog"
    return None, None, None, ""


def _records(plan: dict, row: int, kind: str) -> list[dict]:
    gpu, count, vram, how = _gpu_facts(plan)
    if gpu is None:
        return [not_an_offer(row, plan, "NOT_A_GPU_OFFER", f"plan {plan.get('id')!r} is not a GPU plan")]
    if count is None and vram is None and how:
        return [not_an_offer(row, plan, "VRAM_NOT_NUMERIC", f"row {row}: plan {plan.get('id')!r}: {how}")]
    if count is None:
        return [not_an_offer(row, plan, "GPU_COUNT_INVALID", f"plan {plan.get('id')!r}: {how}")]
    on_demand = plan.get("deploy_ondemand", True)
    preemptible = plan.get("deploy_preemptible", "hourly_cost_preemptible" in plan)
    common = dict(offer_id=plan.get("id"), gpu_model=gpu, gpus_per_node=count, price_scope="per_node",
                  currency="USD", region=joined(plan.get("locations")),
                  vram_gb=vram, vram_scope="per_node" if vram else None, notes=f"{kind}; {how}")
    out = []
    if on_demand:
        out.append(record(row, plan, **common, billing_model="on_demand", price=plan.get("hourly_cost"),
                          price_unit="hour"))
        if plan.get("monthly_cost") is not None:
            out.append(record(row, plan, **common, billing_model="monthly", price=plan.get("monthly_cost"),
                              price_unit="month", min_term_hours=HOURS_PER_MONTH))
    if preemptible:
        # A plan sold only preemptible prices it in hourly_cost itself.
        price = plan.get("hourly_cost_preemptible", None if on_demand else plan.get("hourly_cost"))
        out.append(record(row, plan, **common, billing_model="spot", price=price, price_unit="hour"))
    if not out:
        return [not_an_offer(row, plan, "NOT_AVAILABLE", f"plan {plan.get('id')!r} deploys neither on demand nor preemptible")]
    return out


def parse(ctx: FileContext) -> ParseResult:
    """Read a plans or plans-metal response into quote observations."""
    doc = read_json(ctx)
    keys = [k for k in ("plans", "plans_metal") if isinstance(doc, dict) and isinstance(doc.get(k), list)]
    if len(keys) != 1:
        raise FileRejected("SCHEMA_DRIFT", "expected a top-level 'plans' or 'plans_metal' list")
    return to_result(each_record(doc[keys[0]], lambda plan, i: _records(plan, i, keys[0]), "plan"), ctx)

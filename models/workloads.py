"""Contract for declared workloads: what must be completed, in what unit, and how much of it."""
from decimal import Decimal

import pandera.polars as pa
import polars as pl

from models import vocabulary as v

QUANTITY = pl.Decimal(38, 6)
MODES = ["inference", "training", "lora", "qlora"]
# Training activation checkpointing (data/reference/activation_checkpointing.csv, docs/feasibility.md).
CHECKPOINTING = ["none", "selective", "full"]


class Workload(pa.DataFrameModel):
    """One workload to rank configurations for."""

    workload_id: str = pa.Field(str_matches=r"^[a-z0-9][a-z0-9._-]*$", unique=True)
    kind: str = pa.Field(isin=["inference", "training", "batch_job"])
    description: str = pa.Field(nullable=True)
    unit: str = pa.Field(isin=v.WORK_UNITS)
    quantity: QUANTITY = pa.Field(gt=Decimal(0))
    model_id: str = pa.Field(nullable=True)
    precision: str = pa.Field(nullable=True)
    storage_gb: QUANTITY = pa.Field(ge=Decimal(0))
    egress_gb: QUANTITY = pa.Field(ge=Decimal(0))
    setup_hours: QUANTITY = pa.Field(ge=Decimal(0))
    match_workload_id: str = pa.Field(nullable=True)
    # Memory-fit fields (docs/workloads.md); a workload without model_id is not memory-checked.
    kv_precision: str = pa.Field(nullable=True)
    context_tokens: int = pa.Field(nullable=True, gt=0)
    concurrency: int = pa.Field(nullable=True, gt=0)
    engine: str = pa.Field(nullable=True, str_matches=r"^[a-z0-9][a-z0-9._-]*$")
    mode: str = pa.Field(nullable=True, isin=MODES)
    gpu_memory_utilization: float = pa.Field(nullable=True, gt=0, le=1)
    activation_checkpointing: str = pa.Field(nullable=True, isin=CHECKPOINTING)
    lora_rank: int = pa.Field(nullable=True, gt=0)
    # Share of rented time doing useful work (docs/cost-model.md): effective throughput = measured × this.
    utilisation: QUANTITY = pa.Field(gt=Decimal(0), le=Decimal(1))
    line: int = pa.Field(ge=1)
    # Benchmark matching (docs/workloads.md): declared mean tokens per request, the tolerance a run's
    # shape may differ by, and the SLOs ({latency column: ceiling in ms}) a run must meet.
    input_tokens: int = pa.Field(nullable=True, gt=0)
    output_tokens: int = pa.Field(nullable=True, gt=0)
    shape_tolerance_pct: float = pa.Field(in_range={"min_value": 0, "max_value": 100})
    slo_json: str = pa.Field(nullable=True)
    # The stated scenario (offline | server | interactive); null: implied (docs/cost-model.md "Scenario").
    scenario: str = pa.Field(nullable=True, isin=v.SCENARIOS)
    # Demand (docs/workloads.md): fixed quantity, a quantity by a deadline, or a rate sustained over months.
    demand_kind: str = pa.Field(isin=v.DEMAND_KINDS)
    deadline_hours: QUANTITY = pa.Field(nullable=True, gt=Decimal(0))
    units_per_month: QUANTITY = pa.Field(nullable=True, gt=Decimal(0))
    period_months: int = pa.Field(nullable=True, gt=0)
    peak_units_per_hour: QUANTITY = pa.Field(nullable=True, gt=Decimal(0))
    # The user's own spot interruption assumptions per provider (JSON list; never a default).
    spot_interruptions_json: str = pa.Field(nullable=True)

    class Config:
        strict = True

"""Contract for declared workloads: what must be completed, in what unit, and how much of it."""
from decimal import Decimal

import pandera.polars as pa
import polars as pl

UNITS = ["requests", "output_tokens", "total_tokens", "samples", "training_runs", "jobs"]
QUANTITY = pl.Decimal(38, 6)


class Workload(pa.DataFrameModel):
    """One workload to rank configurations for."""

    workload_id: str = pa.Field(str_matches=r"^[a-z0-9][a-z0-9._-]*$", unique=True)
    kind: str = pa.Field(isin=["inference", "training", "batch_job"])
    description: str = pa.Field(nullable=True)
    unit: str = pa.Field(isin=UNITS)
    quantity: QUANTITY = pa.Field(gt=Decimal(0))
    model_id: str = pa.Field(nullable=True)
    precision: str = pa.Field(nullable=True)
    storage_gb: QUANTITY = pa.Field(ge=Decimal(0))
    egress_gb: QUANTITY = pa.Field(ge=Decimal(0))
    setup_hours: QUANTITY = pa.Field(ge=Decimal(0))
    match_workload_id: str = pa.Field(nullable=True)
    line: int = pa.Field(ge=1)

    class Config:
        strict = True

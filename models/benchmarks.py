"""Contract for benchmark runs: one row per measured run of a job on a configuration."""
import datetime as dt

import pandera.polars as pa
import polars as pl

from models.common import Lineage

FINITE_MAX = 1e18  # in_range with a finite max rejects NaN and +Inf, which gt/ge alone let through


class BenchmarkRun(Lineage):
    """What a configuration completed, in what unit, over how long."""

    run_id: str = pa.Field(str_length={"min_value": 1})
    provider: str = pa.Field(nullable=True)
    gpu_model: str = pa.Field(str_length={"min_value": 1})
    gpu_count: pl.Int32 = pa.Field(ge=1, le=4096)
    model_id: str = pa.Field(nullable=True)
    precision: str = pa.Field(nullable=True)
    engine: str = pa.Field(nullable=True)
    engine_version: str = pa.Field(nullable=True)
    rocm_version: str = pa.Field(nullable=True)
    workload_id: str = pa.Field(nullable=True)
    unit: str = pa.Field(isin=["requests", "output_tokens", "total_tokens", "samples", "training_runs", "jobs"])
    completed: float = pa.Field(in_range={"min_value": 0, "max_value": FINITE_MAX})
    failed: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": FINITE_MAX})
    duration_s: float = pa.Field(gt=0, in_range={"min_value": 0, "max_value": FINITE_MAX})
    output_tokens_per_s: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": FINITE_MAX})
    started_at: pl.Datetime("us", "UTC") = pa.Field(nullable=True)

    class Config:
        strict = True
        unique = ["source_name", "file_sha256", "run_id"]

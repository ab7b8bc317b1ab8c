"""Contract for benchmark runs: one row per measured run of a job on a configuration."""
import datetime as dt

import pandera.polars as pa
import polars as pl
from pandera.api.polars.types import PolarsData

from models import vocabulary as v
from models.common import Lineage
from models.plausibility import IMPLAUSIBLE, limit, tokens_per_s_per_gpu_ceiling

FINITE_MAX = 1e18  # in_range with a finite max rejects NaN and +Inf, which gt/ge alone let through
MIN_DURATION_S = limit("benchmark_duration_s")[0]
MAX_GPUS_PER_NODE = limit("gpus_per_node")[1]
# Rates per GPU bounded by the tokens/s ceiling: tokens, and requests (each carries at least one token).
TOKEN_RATES = ["output_tokens_per_s", "total_tokens_per_s", "request_throughput_per_s"]
TOKEN_UNITS = ["output_tokens", "total_tokens", "requests"]


def _per_gpu_within_ceiling(rate: pl.Expr) -> pl.Expr:
    """rate / gpu_count at most the physical tokens/s per GPU ceiling (absent rates pass)."""
    return (rate / pl.col("gpu_count") <= tokens_per_s_per_gpu_ceiling()).fill_null(True)


def _latency_ms():
    """A latency in ms: absent, or a finite non-negative number (each column needs its own Field)."""
    return pa.Field(nullable=True, in_range={"min_value": 0, "max_value": FINITE_MAX})


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
    unit: str = pa.Field(isin=v.WORK_UNITS)
    # completed and duration_s are absent where a format states only rates (MLPerf summaries).
    completed: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": FINITE_MAX})
    failed: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": FINITE_MAX})
    duration_s: float = pa.Field(nullable=True, gt=0, in_range={"min_value": 0, "max_value": FINITE_MAX})
    output_tokens_per_s: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": FINITE_MAX})
    started_at: pl.Datetime("us", "UTC") = pa.Field(nullable=True)
    # What the benchmark formats carry (docs/formats/benchmarks.md); null where a format lacks it.
    # Units are fixed here: latencies in ms, durations in s, throughputs per second for the whole
    # system (all GPUs of the run), token counts in tokens.
    benchmark_format: str = pa.Field(nullable=True)
    scenario: str = pa.Field(nullable=True)
    label: str = pa.Field(nullable=True)
    result_valid: bool = pa.Field(nullable=True)
    attempted: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": FINITE_MAX})
    request_rate_per_s: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": FINITE_MAX})
    request_rate_raw: str = pa.Field(nullable=True)
    max_concurrency: pl.Int64 = pa.Field(nullable=True, ge=1)
    achieved_concurrency: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": FINITE_MAX})
    input_len_tokens: pl.Int64 = pa.Field(nullable=True, ge=0)
    output_len_tokens: pl.Int64 = pa.Field(nullable=True, ge=0)
    input_tokens_total: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": FINITE_MAX})
    output_tokens_total: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": FINITE_MAX})
    mean_input_tokens: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": FINITE_MAX})
    mean_output_tokens: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": FINITE_MAX})
    request_throughput_per_s: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": FINITE_MAX})
    request_goodput_per_s: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": FINITE_MAX})
    total_tokens_per_s: float = pa.Field(nullable=True, in_range={"min_value": 0, "max_value": FINITE_MAX})
    ttft_mean_ms: float = _latency_ms()
    ttft_median_ms: float = _latency_ms()
    ttft_std_ms: float = _latency_ms()
    ttft_p90_ms: float = _latency_ms()
    ttft_p95_ms: float = _latency_ms()
    ttft_p99_ms: float = _latency_ms()
    tpot_mean_ms: float = _latency_ms()
    tpot_median_ms: float = _latency_ms()
    tpot_std_ms: float = _latency_ms()
    tpot_p90_ms: float = _latency_ms()
    tpot_p95_ms: float = _latency_ms()
    tpot_p99_ms: float = _latency_ms()
    itl_mean_ms: float = _latency_ms()
    itl_median_ms: float = _latency_ms()
    itl_std_ms: float = _latency_ms()
    itl_p90_ms: float = _latency_ms()
    itl_p95_ms: float = _latency_ms()
    itl_p99_ms: float = _latency_ms()
    e2el_mean_ms: float = _latency_ms()
    e2el_median_ms: float = _latency_ms()
    e2el_std_ms: float = _latency_ms()
    e2el_p90_ms: float = _latency_ms()
    e2el_p95_ms: float = _latency_ms()
    e2el_p99_ms: float = _latency_ms()
    latency_stats_ms_json: str = pa.Field(nullable=True)
    metadata_json: str = pa.Field(nullable=True)
    request_rows: pl.Int64 = pa.Field(nullable=True, ge=0)
    # Nodes the run spanned, when the source states it (MLPerf number_of_nodes, vLLM --metadata
    # node_count, sources.yaml defaults); multi-node configurations match on it (docs/cost-model.md).
    node_count: pl.Int32 = pa.Field(nullable=True, ge=1, le=4096)
    # sources.yaml `perf_confirmed: true`: the user vouches for runs far above published results.
    perf_confirmed: bool

    # Plausibility (data/reference/plausibility_limits.csv): a check named IMPLAUSIBLE_VALUE… quarantines
    # the row with that reason code (flows/ingest/validate.py), naming the field and its value.
    @pa.check("duration_s", name=f"{IMPLAUSIBLE}: duration_s below {MIN_DURATION_S} s")
    def duration_plausible(cls, data: PolarsData) -> pl.LazyFrame:
        """A run that completed anything took at least one forward pass."""
        return data.lazyframe.select(pl.col("duration_s").is_null() | (pl.col("duration_s") >= MIN_DURATION_S))

    @pa.check("output_tokens_per_s", name=f"{IMPLAUSIBLE}: output_tokens_per_s per GPU above the physical ceiling")
    def output_rate_plausible(cls, data: PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(_per_gpu_within_ceiling(pl.col("output_tokens_per_s")))

    @pa.check("total_tokens_per_s", name=f"{IMPLAUSIBLE}: total_tokens_per_s per GPU above the physical ceiling")
    def total_rate_plausible(cls, data: PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(_per_gpu_within_ceiling(pl.col("total_tokens_per_s")))

    @pa.check("request_throughput_per_s",
              name=f"{IMPLAUSIBLE}: request_throughput_per_s per GPU above the physical tokens/s ceiling")
    def request_rate_plausible(cls, data: PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(_per_gpu_within_ceiling(pl.col("request_throughput_per_s")))

    @pa.check("completed", name=f"{IMPLAUSIBLE}: completed / duration_s per GPU above the physical tokens/s ceiling")
    def completed_rate_plausible(cls, data: PolarsData) -> pl.LazyFrame:
        """Counted tokens or requests over the run's duration: the rate the cost model uses."""
        rate = pl.when(pl.col("unit").is_in(TOKEN_UNITS)).then(pl.col("completed") / pl.col("duration_s"))
        return data.lazyframe.select(_per_gpu_within_ceiling(rate))

    @pa.check("gpu_count", name=f"{IMPLAUSIBLE}: gpu_count / node_count above {MAX_GPUS_PER_NODE:g} GPUs per node")
    def gpus_per_node_plausible(cls, data: PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(
            (pl.col("gpu_count") / pl.col("node_count") <= MAX_GPUS_PER_NODE).fill_null(True))

    class Config:
        strict = True
        unique = ["source_name", "file_sha256", "run_id"]


class BenchmarkRequest(Lineage):
    """One request of a benchmark run with per-request detail (vLLM --save-detailed lists).

    row_number is the row (line) of the run this request belongs to."""

    run_id: str = pa.Field(str_length={"min_value": 1})
    request_index: pl.Int64 = pa.Field(ge=0)
    succeeded: bool = pa.Field(nullable=True)  # null when the file has no errors list
    input_tokens: pl.Int64 = pa.Field(nullable=True, ge=0)
    output_tokens: pl.Int64 = pa.Field(nullable=True, ge=0)
    ttft_ms: float = _latency_ms()
    latency_ms: float = _latency_ms()
    tpot_ms: float = _latency_ms()
    itl_count: pl.Int64 = pa.Field(nullable=True, ge=0)
    itl_mean_ms: float = _latency_ms()
    itl_max_ms: float = _latency_ms()
    error: str = pa.Field(nullable=True)

    class Config:
        strict = True

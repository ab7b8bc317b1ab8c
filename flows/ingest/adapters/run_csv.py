"""run-csv: generic benchmark runs (any job) — configuration, workload, duration, completed units."""
import polars as pl

from flows.ingest.adapters import fields as f
from flows.ingest.adapters.base import FileContext, ParseResult
from flows.ingest.adapters.row_rules import Rule, apply_rules
from flows.ingest.adapters.bench_runs import with_contract_columns
from flows.ingest.adapters.csv_text import read_csv_text
from models import vocabulary

REQUIRED = {"run_id", "gpu_count", "unit", "completed", "duration_s"}
OPTIONAL = {
    "provider", "gpu_model", "model_id", "precision", "engine", "engine_version", "rocm_version",
    "workload_id", "failed", "output_tokens_per_s", "started_at", "notes",
}
UNITS = {u: u for u in vocabulary.WORK_UNITS}
MAX_DURATION_S = 365 * 24 * 3600  # a run longer than a year is a unit mistake, not a benchmark
METADATA = ["provider", "gpu_model", "model_id", "precision", "engine", "engine_version", "rocm_version"]


def _metric_rules(name: str, allow_zero: bool) -> list[Rule]:
    value = f.as_float(f.raw(name))
    rules = [
        Rule("METRIC_NOT_NUMERIC", f.raw(name).is_not_null() & value.is_null(),
             pl.format("{} '{}' is not a number", pl.lit(name), f.raw(name))),
        Rule("METRIC_NONFINITE", value.is_nan() | value.is_infinite(),
             pl.format("{} '{}' is not finite", pl.lit(name), f.raw(name))),
        Rule("METRIC_OUT_OF_RANGE", (value < 0) if allow_zero else (value <= 0),
             pl.format("{} {} must be {}", pl.lit(name), f.raw(name), pl.lit(">= 0" if allow_zero else "> 0"))),
    ]
    return rules


def _rules(defaults: dict) -> list[Rule]:
    gpu = f.with_default("gpu_model", defaults)
    count = f.with_default("gpu_count", defaults)
    return [
        f.required_rule("run_id", f.raw("run_id")),
        *f.gpu_rules(gpu),
        *f.model_rules(f.with_default("model_id", defaults), f.declared_models(defaults)),
        Rule("GPU_COUNT_INVALID", f.as_count(count).is_null(),
             pl.format("gpu_count '{}' is not a positive whole number", count.fill_null("(empty)"))),
        Rule("UNIT_MISSING", f.raw("unit").is_null(), pl.lit("unit is empty")),
        Rule("METRIC_UNIT_UNKNOWN", f.raw("unit").is_not_null() & f.enum_value(f.raw("unit"), UNITS).is_null(),
             pl.format("unit '{}' is not one of {}", f.raw("unit"), pl.lit("/".join(UNITS)))),
        f.required_rule("completed", f.raw("completed")),
        *_metric_rules("completed", allow_zero=True),
        *_metric_rules("failed", allow_zero=True),
        f.required_rule("duration_s", f.raw("duration_s")),
        *_metric_rules("duration_s", allow_zero=False),
        Rule("DURATION_INVALID", f.as_float(f.raw("duration_s")) > MAX_DURATION_S,
             pl.format("duration_s {} is longer than a year", f.raw("duration_s"))),
        *_metric_rules("output_tokens_per_s", allow_zero=True),
        Rule("TIMESTAMP_INVALID", f.raw("started_at").is_not_null() & f.as_utc_timestamp(f.raw("started_at")).is_null(),
             pl.format("started_at '{}' is not ISO-8601 with a UTC offset", f.raw("started_at"))),
        *f.default_conflict_rules(METADATA + ["gpu_count"], defaults),
    ]


def _canonical(frame: pl.DataFrame, ctx: FileContext) -> pl.DataFrame:
    d = ctx.defaults
    return frame.select(
        pl.lit(ctx.source_name).alias("source_name"),
        pl.lit(ctx.original_name).alias("source_file"),
        pl.lit(ctx.file_sha256).alias("file_sha256"),
        pl.col("row_number"),
        f.raw("run_id").alias("run_id"),
        f.with_default("provider", d).alias("provider"),
        f.gpu_model(f.with_default("gpu_model", d)).alias("gpu_model"),
        f.as_count(f.with_default("gpu_count", d)).cast(pl.Int32).alias("gpu_count"),
        f.model_id(f.with_default("model_id", d), f.declared_models(d)).alias("model_id"),
        f.precision_from_model(f.with_default("precision", d), f.with_default("model_id", d),
                               f.declared_models(d)).alias("precision"),
        *[f.with_default(c, d).alias(c) for c in ("engine", "engine_version", "rocm_version")],
        f.raw("workload_id").alias("workload_id"),
        f.enum_value(f.raw("unit"), UNITS).alias("unit"),
        f.as_float(f.raw("completed")).alias("completed"),
        f.as_float(f.raw("failed")).alias("failed"),
        f.as_float(f.raw("duration_s")).alias("duration_s"),
        f.as_float(f.raw("output_tokens_per_s")).alias("output_tokens_per_s"),
        f.as_utc_timestamp(f.raw("started_at")).alias("started_at"),
        pl.lit(bool(d.get("perf_confirmed")), pl.Boolean).alias("perf_confirmed"),
    )


def parse(ctx: FileContext) -> ParseResult:
    """Read one run-csv file into canonical benchmark runs plus quarantined rows."""
    raw = read_csv_text(ctx, REQUIRED, OPTIONAL)
    good, bad = apply_rules(raw, _rules(ctx.defaults))
    accepted = with_contract_columns(_canonical(good, ctx), "run-csv")
    return ParseResult(accepted=accepted, quarantined=bad, rows_in=raw.height)

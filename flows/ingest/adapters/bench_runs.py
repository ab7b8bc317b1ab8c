"""Shared by the benchmark-result adapters: run records → canonical benchmark_runs (+ requests).

An adapter reads its format and hands over one RunRecord (run_record.py) per run with every value already in the
canonical unit (ms, s, whole-system per-second rates). This module resolves the metadata (file
fields, then vLLM --metadata, then sources.yaml defaults), applies the numeric rules and shapes
the canonical frames. Conversions happen in the adapters, exactly once."""
import json
from dataclasses import dataclass

import polars as pl

from flows.ingest import names
from flows.ingest.adapters import fields as f
from flows.ingest.adapters.base import FILE_INDEX, FILE_SHA256, SOURCE_FILE, FileContext, ParseResult
from flows.ingest.adapters.quarantine import empty_quarantine
from flows.ingest.adapters.row_rules import Rule, apply_rules
from flows.ingest.adapters.run_record import LATENCY_COLUMNS, STARTED, RunRecord
from models.benchmarks import BenchmarkRequest, BenchmarkRun

METADATA = ["provider", "gpu_model", "gpu_count", "model_id", "precision", "engine", "engine_version",
            "rocm_version", "node_count"]
# Counts, durations and rates a run may carry (floats; NaN/Inf/negative are named by the rules).
MEASURES = [
    "completed", "failed", "attempted", "duration_s", "request_rate_per_s", "achieved_concurrency",
    "input_tokens_total", "output_tokens_total", "mean_input_tokens", "mean_output_tokens",
    "request_throughput_per_s", "request_goodput_per_s", "output_tokens_per_s", "total_tokens_per_s",
    *LATENCY_COLUMNS,
]
THROUGHPUTS = ["request_throughput_per_s", "output_tokens_per_s", "total_tokens_per_s"]
WHOLE_NUMBERS = ["max_concurrency", "input_len_tokens", "output_len_tokens"]
TEXT = ["workload_id", "scenario", "label", "request_rate_raw", "latency_stats_ms_json"]
MAX_DURATION_S = 365 * 24 * 3600


def _norm(name: str, value) -> str | None:
    """The comparable form of a metadata value (GPU names through the alias table)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = str(value).strip()
    if name == "gpu_model":
        return names.resolve_gpu(text).gpu_model or text.lower()
    if name in ("gpu_count", "node_count"):
        try:
            return str(int(float(text)))
        except ValueError:
            return text
    return text.lower()


def resolve_metadata(rec: RunRecord, defaults: dict) -> dict:
    """File fields, then --metadata, then sources.yaml defaults; conflicts become problems."""
    out = {}
    for name in METADATA:
        file_value, cli_value, default = rec.file_meta.get(name), rec.cli_meta.get(name), defaults.get(name)
        fv, cv, dv = _norm(name, file_value), _norm(name, cli_value), _norm(name, default)
        if fv is not None and cv is not None and fv != cv:
            rec.problems.append(("METADATA_CONFLICT",
                                 f"{name} is '{file_value}' in the file but '{cli_value}' in its --metadata"))
        stated = file_value if fv is not None else cli_value
        sv = fv if fv is not None else cv
        if sv is not None and dv is not None and sv != dv:
            rec.problems.append(("DEFAULT_CONFLICT",
                                 f"{name} is '{stated}' in the file but '{default}' in sources.yaml defaults"))
        chosen = stated if sv is not None else default
        out[name] = None if chosen is None else str(chosen).strip()
    return out


def _rules(declared: tuple) -> list[Rule]:
    measures = [pl.col(c) for c in MEASURES]
    nonfinite = pl.any_horizontal([c.is_nan() | c.is_infinite() for c in measures])
    negative = pl.any_horizontal([c < 0 for c in measures])
    zero_rate = pl.any_horizontal([pl.col(c) == 0 for c in THROUGHPUTS]) & ~(pl.col("completed") == 0).fill_null(False)

    def named(cond_of, what: str) -> pl.Expr:
        return pl.concat_str(
            [pl.when(cond_of(pl.col(c))).then(pl.format("{} {}", pl.lit(c), pl.col(c).cast(pl.String)))
             for c in MEASURES], separator=", ", ignore_nulls=True) + pl.lit(what)

    return [
        f.required_rule("run_id", pl.col("run_id")),
        Rule("FIELD_MISSING", pl.col("gpu_name_raw").is_null(),
             pl.lit("gpu_model is not in the file, its --metadata or the sources.yaml defaults (never guessed)")),
        # The same name rules as quotes: a bare family name ('H100') is GPU_VARIANT_UNKNOWN, never guessed.
        *[rule for rule in f.gpu_rules(pl.col("gpu_name_raw")) if rule.reason_code != "FIELD_MISSING"],
        *f.model_rules(pl.col("model_id"), declared),
        Rule("GPU_COUNT_INVALID", f.as_count(pl.col("gpu_count_raw")).is_null(),
             pl.format("gpu_count '{}' is not a positive whole number (file, --metadata or sources.yaml defaults)",
                       pl.col("gpu_count_raw").fill_null("(empty)"))),
        Rule("NODE_COUNT_INVALID", pl.col("node_count").is_not_null() & f.as_count(pl.col("node_count")).is_null(),
             pl.format("node_count '{}' is not a positive whole number", pl.col("node_count"))),
        Rule("NODE_COUNT_INVALID", (f.as_count(pl.col("node_count")) > f.as_count(pl.col("gpu_count_raw"))).fill_null(False),
             pl.format("node_count {} is more than the run's {} GPUs", pl.col("node_count"), pl.col("gpu_count_raw"))),
        Rule("METRIC_NONFINITE", nonfinite, named(lambda c: c.is_nan() | c.is_infinite(), " (not finite)")),
        Rule("METRIC_OUT_OF_RANGE", negative, named(lambda c: c < 0, " (negative)")),
        Rule("METRIC_OUT_OF_RANGE", zero_rate,
             named(lambda c: c == 0, " (a zero rate for a run that completed requests)")),
        Rule("METRIC_MISSING", pl.all_horizontal([pl.col(c).is_null() for c in THROUGHPUTS])
             & (pl.col("completed").is_null() | pl.col("duration_s").is_null()),
             pl.lit("neither completed + duration_s nor any throughput is present")),
        Rule("DURATION_INVALID", pl.col("duration_s") == 0, pl.lit("duration_s is 0")),
        Rule("DURATION_INVALID", pl.col("duration_s") > MAX_DURATION_S,
             pl.format("duration_s {} is longer than a year", pl.col("duration_s"))),
        Rule("METRIC_INCONSISTENT", pl.col("completed") > pl.col("attempted"),
             pl.format("completed {} is more than the {} requests attempted", pl.col("completed"), pl.col("attempted"))),
    ]


def _frame(records: list[RunRecord], ctx: FileContext, fmt: str, unit: str, index: int = 0) -> pl.DataFrame:
    """One row per run record, with the file's lineage (`index`: its position in a batch of files)."""
    rows = []
    for rec in records:
        meta = resolve_metadata(rec, ctx.defaults)
        values = dict(rec.values)
        # `failed` is often absent (legacy vLLM, SGLang, InferenceX): attempted − completed.
        if values.get("failed") is None and values.get("attempted") is not None and values.get("completed") is not None:
            values["failed"] = values["attempted"] - values["completed"]
        rows.append({
            "row_number": rec.row_number,
            "run_id": f"{ctx.file_sha256[:12]}:{rec.run_key or rec.row_number}",
            "gpu_name_raw": meta["gpu_model"], "gpu_count_raw": meta["gpu_count"],
            **{k: meta[k] for k in METADATA if k not in ("gpu_model", "gpu_count")},
            **{k: values.get(k) for k in MEASURES + WHOLE_NUMBERS + TEXT if k != "latency_stats_ms_json"},
            "result_valid": values.get("result_valid"),
            STARTED: values.get(STARTED),
            "latency_stats_ms_json": json.dumps(rec.latency_stats_ms, sort_keys=True) if rec.latency_stats_ms else None,
            "metadata_json": json.dumps({**rec.extra_meta, **{f"metadata.{k}": v for k, v in rec.cli_meta.items()}},
                                        sort_keys=True, default=str) if (rec.extra_meta or rec.cli_meta) else None,
            "request_rows": None if rec.requests is None else rec.requests.height,
            "raw_record": json.dumps(rec.raw, sort_keys=True, default=str, allow_nan=True),
            "__code": rec.problems[0][0] if rec.problems else None,
            "__detail": "; ".join(f"{c}: {d}" for c, d in rec.problems) if rec.problems else None,
        })
    schema = {
        "row_number": pl.Int64, "run_id": pl.String, "gpu_name_raw": pl.String, "gpu_count_raw": pl.String,
        **{k: pl.String for k in METADATA if k not in ("gpu_model", "gpu_count")},
        **{k: pl.Float64 for k in MEASURES}, **{k: pl.Int64 for k in WHOLE_NUMBERS},
        **{k: pl.String for k in TEXT}, "result_valid": pl.Boolean, STARTED: pl.Float64,
        "metadata_json": pl.String,
        "request_rows": pl.Int64, "raw_record": pl.String, "__code": pl.String, "__detail": pl.String,
    }
    frame = pl.DataFrame(rows, schema=schema)
    return frame.with_columns(pl.lit(fmt).alias("benchmark_format"), pl.lit(unit).alias("unit"),
                              pl.lit(index, pl.Int32).alias(FILE_INDEX), pl.lit(ctx.original_name).alias(SOURCE_FILE),
                              pl.lit(ctx.file_sha256).alias(FILE_SHA256))


def _canonical(frame: pl.DataFrame, ctx: FileContext) -> pl.DataFrame:
    out = frame.select(
        pl.lit(ctx.source_name).alias("source_name"),
        pl.col(SOURCE_FILE).alias("source_file"),
        pl.col(FILE_SHA256).alias("file_sha256"),
        pl.col("row_number"),
        pl.col("run_id"),
        pl.col("provider"),
        f.gpu_model(pl.col("gpu_name_raw")).alias("gpu_model"),
        f.as_count(pl.col("gpu_count_raw")).cast(pl.Int32).alias("gpu_count"),
        # vLLM/SGLang write the Hugging Face repo id; the catalog id is what workloads match on.
        f.model_id(pl.col("model_id"), f.declared_models(ctx.defaults)).alias("model_id"),
        f.precision_from_model(pl.col("precision"), pl.col("model_id"), f.declared_models(ctx.defaults))
        .alias("precision"),
        *[pl.col(c) for c in ("engine", "engine_version", "rocm_version",
                              "workload_id", "unit", "completed", "failed", "duration_s",
                              "output_tokens_per_s")],
        pl.from_epoch((pl.col(STARTED) * 1e6).round().cast(pl.Int64), time_unit="us")
        .dt.replace_time_zone("UTC").alias("started_at"),
        f.as_count(pl.col("node_count")).cast(pl.Int32).alias("node_count"),
        pl.lit(bool(ctx.defaults.get("perf_confirmed")), pl.Boolean).alias("perf_confirmed"),
        pl.all().exclude(
            "source_name", "source_file", "file_sha256", "row_number", "run_id", "provider", "gpu_name_raw",
            "gpu_count_raw", "model_id", "precision", "engine", "engine_version", "rocm_version",
            "workload_id", "unit", "completed", "failed", "duration_s", "output_tokens_per_s", "raw_record",
            STARTED, "node_count", SOURCE_FILE, FILE_SHA256,
        ),
    )
    return out.select(*BenchmarkRun.to_schema().columns, FILE_INDEX)


def _requests(accepted: pl.DataFrame, records: list[RunRecord], ctx: FileContext) -> pl.DataFrame | None:
    """Per-request rows of accepted runs only, tagged with their run_id and lineage."""
    keep = dict(zip(accepted["row_number"].to_list(), accepted["run_id"].to_list()))
    frames = [
        rec.requests.with_columns(
            pl.lit(ctx.source_name).alias("source_name"), pl.lit(ctx.original_name).alias("source_file"),
            pl.lit(ctx.file_sha256).alias("file_sha256"), pl.lit(rec.row_number, pl.Int64).alias("row_number"),
            pl.lit(keep[rec.row_number]).alias("run_id"),
        )
        for rec in records if rec.requests is not None and rec.row_number in keep
    ]
    return pl.concat(frames, how="diagonal_relaxed") if frames else None


def build(records: list[RunRecord], ctx: FileContext, fmt: str, unit: str = "requests",
          rows_in: int | None = None, quarantined: pl.DataFrame | None = None) -> ParseResult:
    """Resolve metadata, apply the rules and shape canonical runs (and per-request detail)."""
    return build_many([FileRuns(records, ctx, rows_in, quarantined)], fmt, unit)[0]


@dataclass
class FileRuns:
    """One file's run records, as an adapter read them (rows_in: when not one per record)."""

    records: list[RunRecord]
    ctx: FileContext
    rows_in: int | None = None
    quarantined: pl.DataFrame | None = None


def build_many(files: list[FileRuns], fmt: str, unit: str = "requests") -> list[ParseResult]:
    """build for several files of one source (same defaults), checked as one frame: each file's result is
    what build gives it alone (the rules are row-wise), at one rules pass instead of one per file."""
    ctx = files[0].ctx  # the source name and defaults the rules and shaping use: the same for every file
    frame = pl.concat([_frame(one.records, one.ctx, fmt, unit, i) for i, one in enumerate(files)])
    flagged = frame.filter(pl.col("__code").is_not_null())
    pre_bad = flagged.select(
        pl.col("row_number"), pl.col("__code").alias("reason_code"), pl.col("__detail").alias("detail"),
        pl.col("raw_record"), pl.col(FILE_INDEX),
    )
    clean = frame.filter(pl.col("__code").is_null()).drop("__code", "__detail")
    good, bad = apply_rules(clean, _rules(f.declared_models(ctx.defaults)), keep=[FILE_INDEX])
    # apply_rules wraps raw_* columns in an object; the run's raw record is already one JSON object.
    bad = bad.with_columns(pl.col("raw_record").str.json_path_match("$.record"))
    canonical_all = _canonical(good, ctx)
    accepted = canonical_all.partition_by(FILE_INDEX, as_dict=True, include_key=False)
    rejected = pl.concat([pre_bad, bad]).partition_by(FILE_INDEX, as_dict=True, include_key=False)
    no_runs = canonical_all.clear().drop(FILE_INDEX)
    results = []
    for i, one in enumerate(files):
        canonical = accepted.get((i,), no_runs)
        parts = [q for q in (one.quarantined, rejected.get((i,))) if q is not None and q.height]
        result = ParseResult(
            accepted=canonical,
            quarantined=pl.concat(parts) if parts else empty_quarantine(),
            rows_in=len(one.records) if one.rows_in is None else one.rows_in,
        )
        requests = _requests(canonical, one.records, one.ctx)
        if requests is not None:
            result.details["benchmark_requests"] = requests.select(list(BenchmarkRequest.to_schema().columns))
        results.append(result)
    return results


def with_contract_columns(frame: pl.DataFrame, fmt: str) -> pl.DataFrame:
    """Add the benchmark_runs columns a format does not carry (as nulls), in contract order."""
    schema = {name: col.dtype.type for name, col in BenchmarkRun.to_schema().columns.items()}
    missing = [pl.lit(None, dtype).alias(name) for name, dtype in schema.items() if name not in frame.columns]
    return frame.with_columns(missing).with_columns(pl.lit(fmt).alias("benchmark_format")).select(list(schema))

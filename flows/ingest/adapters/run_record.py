"""What a benchmark-result adapter hands over: one RunRecord per run, and the helpers it reads with.

The adapters read their format into RunRecords (values already in canonical units, problems named
as they are found); bench_runs.py turns the records into canonical benchmark_runs (+ requests).
"""
import json
import math
from dataclasses import dataclass, field

import polars as pl

from models.vocabulary import LATENCY_METRICS, LATENCY_STATS

LATENCY_COLUMNS = [f"{m}_{s}_ms" for m in LATENCY_METRICS for s in LATENCY_STATS]
STARTED = "started_at_unix_s"  # when the run started, as Unix seconds (only some formats say)
MAX_WHOLE = 2**63 - 1  # whole-number columns are 64-bit
# Percentile keys such as p99_ttft_ms / p99.9_e2el_ms / P99 TTFT (ms): the metric and the statistic.
STAT_ALIASES = {"mean": "mean", "median": "median", "std": "std", "p50": "median"}


@dataclass
class RunRecord:
    """One run as an adapter read it, values already in canonical units."""

    row_number: int
    raw: dict                     # the run's own fields as found (kept in quarantine when rejected)
    values: dict                  # canonical measure / text columns → value
    file_meta: dict = field(default_factory=dict)   # metadata the file states (highest precedence)
    cli_meta: dict = field(default_factory=dict)    # vLLM --metadata key/values
    extra_meta: dict = field(default_factory=dict)  # other metadata kept as JSON
    latency_stats_ms: dict = field(default_factory=dict)  # every latency statistic found, in ms
    run_key: str | None = None    # readable, unique within the file; row number when absent
    problems: list = field(default_factory=list)    # (reason_code, detail) found while reading
    requests: pl.DataFrame | None = None             # per-request rows (request_index, …)


def stat_column(metric: str, stat: str) -> str | None:
    """The canonical column for a metric statistic, or None when it has no fixed column."""
    stat = STAT_ALIASES.get(stat, stat)
    column = f"{metric}_{stat}_ms"
    return column if column in LATENCY_COLUMNS else None


def percentile_label(number: str) -> str:
    """'99' → 'p99', '99.0' → 'p99', '99.9' → 'p99.9', '50' → 'median'."""
    value = float(number)
    label = f"p{int(value)}" if value == int(value) else f"p{value:g}"
    return "median" if label == "p50" else label


def number(value, name: str, problems: list) -> float | None:
    """A JSON value as a float; text that is not a number is named, not guessed."""
    if value is None:
        return None
    if isinstance(value, bool):
        problems.append(("METRIC_NOT_NUMERIC", f"{name} {value!r} is not a number"))
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:  # a JSON integer of hundreds of digits
            problems.append(("METRIC_OUT_OF_RANGE", f"{name} {str(value)[:40]}... ({len(str(value))} digits) is too large"))
            return None
    if isinstance(value, str):
        try:
            return float(value.strip())  # 'NaN', 'inf' parse: the rules then name them
        except ValueError:
            pass
    problems.append(("METRIC_NOT_NUMERIC", f"{name} {value!r} is not a number"))
    return None


def whole_number(value, name: str, problems: list) -> int | None:
    """A JSON value as a non-negative whole number, or a named problem."""
    got = number(value, name, problems)
    if got is None:
        return None
    if not math.isfinite(got) or got < 0 or got != int(got) or int(got) > MAX_WHOLE:
        problems.append(("METRIC_OUT_OF_RANGE", f"{name} {str(value)[:40]!r} is not a whole number from 0 to {MAX_WHOLE}"))
        return None
    return int(got)


def quarantine_line(row_number: int, code: str, detail: str, raw_text: str) -> dict:
    """A quarantine row for a line that could not even be read as a run."""
    return {"row_number": row_number, "reason_code": code, "detail": detail, "raw_record": json.dumps({"line": raw_text})}


def add_mean_lengths(values: dict) -> None:
    """Mean input/output tokens per completed request, from the totals (when both are known)."""
    done = values.get("completed")
    if done:
        if values.get("input_tokens_total") is not None:
            values["mean_input_tokens"] = values["input_tokens_total"] / done
        if values.get("output_tokens_total") is not None:
            values["mean_output_tokens"] = values["output_tokens_total"] / done

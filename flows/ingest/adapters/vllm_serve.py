"""vllm-serve: `vllm bench serve` / benchmark_serving.py --save-result JSON (current and legacy keys)."""
import re
from pathlib import Path

import polars as pl

from flows.ingest.adapters import bench_runs as br
from flows.ingest.adapters import run_record as rr
from flows.ingest.adapters.base import FileContext, FileRejected, ParseResult
from flows.ingest.adapters.quarantine import QUARANTINE_COLUMNS
from flows.ingest.adapters.json_text import read_document, read_lines

# Keys the benchmark client writes itself; any other top-level key came from --metadata KEY=VALUE.
CLIENT_KEYS = {
    "date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts", "request_rate",
    "burstiness", "max_concurrency", "ramp_up_strategy", "ramp_up_start_rps", "ramp_up_end_rps", "best_of",
    "use_beam_search", "duration", "completed", "failed", "total_input_tokens", "total_output_tokens",
    "request_throughput", "request_goodput", "request_goodput:", "output_throughput", "total_token_throughput",
    "max_output_tokens_per_s", "max_concurrent_requests", "rtfx", "benchmark_start_time_unix",
    "benchmark_end_time_unix", "rps_change_events", "total_input_sequences", "input_sequence_throughput",
    "input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times", "queue_times",
    "generated_texts", "errors", "goodput",
}
CLIENT_PREFIXES = ("probe_", "spec_decode_", "diffusion_")
# Latency statistics: mean_ttft_ms, median_itl_ms, std_tpot_ms, p99_e2el_ms, p99.9_ttft_ms, …
LATENCY_KEY = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_([a-z0-9_]+?)_ms$")
# The client's --backend names a serving engine only for these; 'openai' and friends do not.
ENGINE_BACKENDS = {"vllm": "vllm", "sglang": "sglang", "tgi": "tgi", "lmdeploy": "lmdeploy",
                   "tensorrt-llm": "tensorrt-llm", "deepspeed-mii": "deepspeed-mii"}
METRIC_ALIASES = {"e2e_latency": "e2el"}


def is_pytorch_sibling(path: Path) -> bool:
    """vLLM also writes <name>.pytorch.json (PyTorch benchmark format): not a result file."""
    return path.name.endswith(".pytorch.json")


def latency_stats(doc: dict, problems: list) -> tuple[dict, dict]:
    """(fixed latency columns, every statistic found keyed like 'p99.9_ttft'), all in ms."""
    columns, found = {}, {}
    for key, value in doc.items():
        match = LATENCY_KEY.match(key)
        if not match:
            continue
        stat, metric = match.groups()
        metric = METRIC_ALIASES.get(metric, metric)
        stat = stat if not stat.startswith("p") else rr.percentile_label(stat[1:])
        ms = rr.number(value, key, problems)  # vLLM and SGLang already report these in ms
        found[f"{stat}_{metric}"] = ms
        column = rr.stat_column(metric, stat)
        if column:
            columns[column] = ms
    return columns, found


def _request_rate(value, problems: list) -> tuple[float | None, str | None]:
    """request_rate is a number or 'inf' (no limit): the rate, and the value as written."""
    if value is None:
        return None, None
    if isinstance(value, str) and value.strip().lower() in ("inf", "infinity"):
        return None, "inf"
    return rr.number(value, "request_rate", problems), str(value)


def requests_frame(doc: dict, problems: list) -> pl.DataFrame | None:
    """--save-detailed lists → one row per request (seconds → ms here), built column-wise."""
    lists = {k: doc.get(k) for k in ("input_lens", "output_lens", "ttfts", "itls", "latencies", "e2els", "errors")}
    if lists["latencies"] is None:
        lists["latencies"] = lists.pop("e2els")
    else:
        lists.pop("e2els")
    if all(lists.get(k) is None for k in ("ttfts", "latencies", "errors", "itls")):
        return None  # not a detailed file (input/output lengths alone are kept by some forks)
    present = {k: v for k, v in lists.items() if v is not None}
    bad = [k for k, v in present.items() if not isinstance(v, list)]
    lengths = {len(v) for v in present.values() if isinstance(v, list)}
    if bad or len(lengths) > 1:
        problems.append(("REQUEST_DETAIL_INVALID",
                         f"per-request lists are not lists of one length: {({k: len(v) if isinstance(v, list) else type(v).__name__ for k, v in present.items()})}"))
        return None
    n = lengths.pop() if lengths else 0
    try:
        cols = {
            "input_tokens": pl.Series(present.get("input_lens", [None] * n), dtype=pl.Int64),
            "output_tokens": pl.Series(present.get("output_lens", [None] * n), dtype=pl.Int64),
            "ttft_s": pl.Series(present.get("ttfts", [None] * n), dtype=pl.Float64),
            "latency_s": pl.Series(present.get("latencies", [None] * n), dtype=pl.Float64),
            "itls_s": pl.Series(present.get("itls", [None] * n), dtype=pl.List(pl.Float64)),
            "error": pl.Series(present.get("errors", [None] * n), dtype=pl.String),
        }
    except (TypeError, ValueError, pl.exceptions.PolarsError) as exc:
        problems.append(("REQUEST_DETAIL_INVALID", f"a per-request list holds a value of the wrong type: {str(exc).splitlines()[0]}"))
        return None
    frame = pl.DataFrame(cols).with_row_index("request_index").with_columns(pl.col("request_index").cast(pl.Int64))
    has_errors = "errors" in present
    succeeded = (pl.col("error").is_null() | (pl.col("error") == "")) if has_errors else pl.lit(None, pl.Boolean)
    out = frame.select(
        pl.col("request_index"),
        succeeded.alias("succeeded"),
        pl.col("input_tokens"), pl.col("output_tokens"),
        (pl.col("ttft_s") * 1000).alias("ttft_ms"),
        (pl.col("latency_s") * 1000).alias("latency_ms"),
        # vLLM's TPOT: time after the first token over the tokens after the first one.
        pl.when(pl.col("output_tokens") > 1)
        .then((pl.col("latency_s") - pl.col("ttft_s")) * 1000 / (pl.col("output_tokens") - 1)).alias("tpot_ms"),
        pl.col("itls_s").list.len().cast(pl.Int64).alias("itl_count"),
        (pl.col("itls_s").list.mean() * 1000).alias("itl_mean_ms"),
        (pl.col("itls_s").list.max() * 1000).alias("itl_max_ms"),
        (pl.col("itls_s").list.min() * 1000).alias("__itl_min_ms"),
        pl.col("error").replace("", None).alias("error"),
    )
    floats = [pl.col(c) for c in ("ttft_ms", "latency_ms", "tpot_ms", "itl_mean_ms", "itl_max_ms", "__itl_min_ms")]
    checks = out.select(
        pl.any_horizontal([c.is_nan() | c.is_infinite() for c in floats]).sum().alias("nonfinite"),
        pl.any_horizontal([c < 0 for c in floats] + [pl.col("input_tokens") < 0, pl.col("output_tokens") < 0])
        .sum().alias("negative"),
    ).row(0, named=True)
    if checks["nonfinite"] or checks["negative"]:
        # A negative TPOT means a latency shorter than its own TTFT: the lists cannot be trusted.
        problems.append(("REQUEST_DETAIL_INVALID",
                         f"{checks['nonfinite']} request(s) with NaN/Inf and {checks['negative']} with negative values"))
        return None
    return out.drop("__itl_min_ms")


def record(doc: dict, row_number: int, run_key: str | None) -> rr.RunRecord:
    """One saved result object → a run record (used for vllm-serve files)."""
    problems: list = []
    num = lambda k: rr.number(doc.get(k), k, problems)  # noqa: E731
    columns, found = latency_stats(doc, problems)
    rate, rate_raw = _request_rate(doc.get("request_rate"), problems)
    # The legacy client wrote the goodput key with a trailing colon (vLLM PR #16018).
    goodput = doc["request_goodput"] if doc.get("request_goodput") is not None else doc.get("request_goodput:")
    values = {
        "completed": num("completed"), "failed": num("failed"), "attempted": num("num_prompts"),
        "duration_s": num("duration"),
        "request_rate_per_s": rate, "request_rate_raw": rate_raw,
        "max_concurrency": rr.whole_number(doc.get("max_concurrency"), "max_concurrency", problems),
        "input_tokens_total": num("total_input_tokens"), "output_tokens_total": num("total_output_tokens"),
        "request_throughput_per_s": num("request_throughput"),
        "request_goodput_per_s": rr.number(goodput, "request_goodput", problems),
        "output_tokens_per_s": num("output_throughput"), "total_tokens_per_s": num("total_token_throughput"),
        "label": doc.get("label") if isinstance(doc.get("label"), str) else None,
        rr.STARTED: num("benchmark_start_time_unix"),
        **columns,
    }
    rr.add_mean_lengths(values)
    backend = str(doc.get("backend") or "").lower()
    metadata = {k: v for k, v in doc.items() if k not in CLIENT_KEYS and not k.startswith(CLIENT_PREFIXES)
                and not LATENCY_KEY.match(k)}
    requests = requests_frame(doc, problems)
    raw = {k: v for k, v in doc.items() if not isinstance(v, list)}
    return rr.RunRecord(
        row_number=row_number, raw=raw, values=values,
        file_meta={"model_id": doc.get("model_id"), "engine": ENGINE_BACKENDS.get(backend)},
        cli_meta=metadata,
        extra_meta={k: doc[k] for k in ("date", "backend", "tokenizer_id", "burstiness") if doc.get(k) is not None},
        latency_stats_ms=found, run_key=run_key, problems=problems, requests=requests,
    )


def _is_result(doc) -> bool:
    return isinstance(doc, dict) and "completed" in doc and "duration" in doc


def parse(ctx: FileContext) -> ParseResult:
    """Read one --save-result JSON file: one run (with per-request rows when it is detailed).

    A file written with --append-result holds one result object per line: each is a run."""
    return br.build_many([_runs(ctx)], "vllm-serve")[0]


def parse_many(ctxs: list[FileContext]) -> list[ParseResult | FileRejected]:
    """parse for files of one source: each read on its own, their runs checked together (one rules pass)."""
    out: list[ParseResult | FileRejected | None] = [None] * len(ctxs)
    read: dict[int, br.FileRuns] = {}
    for i, ctx in enumerate(ctxs):
        try:
            read[i] = _runs(ctx)
        except FileRejected as exc:
            out[i] = exc
    if read:
        for i, result in zip(read, br.build_many(list(read.values()), "vllm-serve")):
            out[i] = result
    return out


def _runs(ctx: FileContext) -> br.FileRuns:
    """The run records of one file (one, or one per --append-result line), before the rules."""
    try:
        doc = read_document(ctx)
    except FileRejected as exc:
        # Too large to parse whole, or several objects: read as --append-result lines, each capped.
        if exc.reason_code != "TOO_LARGE" and (exc.reason_code != "JSON_MALFORMED" or "Extra data" not in exc.detail):
            raise
        return _appended(ctx)
    if not isinstance(doc, dict):
        raise FileRejected("SCHEMA_DRIFT", f"expected one JSON object, found a {type(doc).__name__}")
    if not _is_result(doc):
        raise FileRejected("SCHEMA_DRIFT", "not a vllm bench serve result: 'completed' or 'duration' is missing")
    return br.FileRuns([record(doc, 1, None)], ctx)


def _appended(ctx: FileContext) -> br.FileRuns:
    """--append-result: results separated by newlines; a bad line is quarantined on its own."""
    good, bad = read_lines(ctx, _is_result, "a vllm bench serve result object")
    quarantined = pl.DataFrame([rr.quarantine_line(*b) for b in bad], schema=QUARANTINE_COLUMNS) if bad else None
    records = [record(doc, number, f"L{number}") for number, doc in good]
    return br.FileRuns(records, ctx, rows_in=len(good) + len(bad), quarantined=quarantined)

"""sglang-serving: `python -m sglang.bench_serving --output-file` JSONL, one run appended per line."""
import polars as pl

from flows.ingest.adapters import bench_runs as br
from flows.ingest.adapters import run_record as rr
from flows.ingest.adapters.base import FileContext, FileRejected, ParseResult
from flows.ingest.adapters.quarantine import QUARANTINE_COLUMNS
from flows.ingest.adapters.json_text import read_lines
from flows.ingest.adapters.vllm_serve import latency_stats, requests_frame

SERVER_INFO_KEYS = ("model_path", "tp_size", "dp_size", "pp_size", "version", "dtype", "kv_cache_dtype",
                    "quantization", "mem_fraction_static")


def _engine(backend) -> str | None:
    """bench_serving can drive other servers: its --backend names the engine it measured."""
    name = str(backend or "sglang").lower()
    return "sglang" if name.startswith("sglang") else "vllm" if name.startswith("vllm") else None


def _record(doc: dict, line: int) -> rr.RunRecord:
    problems: list = []
    num = lambda k: rr.number(doc.get(k), k, problems)  # noqa: E731
    columns, found = latency_stats(doc, problems)
    rate = doc.get("request_rate")
    rate_raw = None if rate is None else str(rate)
    # 'inf' (no limit) and 'trace' (replayed timestamps) are not rates.
    rate_per_s = None if rate_raw is None or rate_raw.lower() in ("inf", "infinity", "trace") else rr.number(rate, "request_rate", problems)
    total = num("total_throughput")
    if total is None and doc.get("input_throughput") is not None and doc.get("output_throughput") is not None:
        parts = num("input_throughput"), num("output_throughput")  # older clients print no total
        total = None if None in parts else parts[0] + parts[1]
    values = {
        "completed": num("completed"), "attempted": num("num_prompts"), "duration_s": num("duration"),
        "request_rate_per_s": rate_per_s, "request_rate_raw": rate_raw,
        "max_concurrency": rr.whole_number(doc.get("max_concurrency"), "max_concurrency", problems),
        # SGLang's `concurrency` is the achieved mean (sum of latencies / duration), not the setting.
        "achieved_concurrency": num("concurrency"),
        "input_len_tokens": rr.whole_number(doc.get("random_input_len"), "random_input_len", problems)
        if doc.get("dataset_name") == "random" else None,
        "output_len_tokens": rr.whole_number(doc.get("random_output_len"), "random_output_len", problems)
        if doc.get("dataset_name") == "random" else None,
        "input_tokens_total": num("total_input_tokens"), "output_tokens_total": num("total_output_tokens"),
        "request_throughput_per_s": num("request_throughput"), "output_tokens_per_s": num("output_throughput"),
        "total_tokens_per_s": total, "label": doc.get("tag") if isinstance(doc.get("tag"), str) else None,
        **columns,
    }
    rr.add_mean_lengths(values)
    info = doc.get("server_info") if isinstance(doc.get("server_info"), dict) else {}
    extra = {f"server_info.{k}": info[k] for k in SERVER_INFO_KEYS if info.get(k) is not None}
    extra.update({k: doc[k] for k in ("backend", "dataset_name") if doc.get(k) is not None})
    raw = {k: v for k, v in doc.items() if not isinstance(v, (list, dict))}
    return rr.RunRecord(
        row_number=line, raw=raw, values=values,
        file_meta={"model_id": info.get("model_path"), "engine_version": info.get("version"),
                   "engine": _engine(doc.get("backend"))},
        extra_meta=extra, latency_stats_ms=found, run_key=f"L{line}", problems=problems,
        requests=requests_frame(doc, problems),
    )


def parse(ctx: FileContext) -> ParseResult:
    """Each non-blank line is one run; a line that is not a JSON object is quarantined on its own."""
    good, bad = read_lines(ctx, lambda d: isinstance(d, dict) and "completed" in d and "duration" in d,
                           "an SGLang bench_serving result object")
    records = [_record(doc, number) for number, doc in good]
    rows_in = len(good) + len(bad)
    if rows_in == 0:
        raise FileRejected("EMPTY", f"{ctx.original_name} has no lines")
    quarantined = pl.DataFrame([rr.quarantine_line(*b) for b in bad], schema=QUARANTINE_COLUMNS) if bad else None
    return br.build(records, ctx, "sglang-serving", rows_in=rows_in, quarantined=quarantined)

"""vllm-serve-log: the "Serving Benchmark Result" blocks benchmark_serving.py prints (one run each)."""
import re

import polars as pl

from flows.ingest.adapters import bench_runs as br
from flows.ingest.adapters.base import QUARANTINE_COLUMNS, FileContext, FileRejected, ParseResult
from flows.ingest.adapters.json_text import read_text

HEADER = re.compile(r"=+\s*Serving Benchmark Result\s*=+")
END = re.compile(r"^=+\s*$")
LINE = re.compile(r"^\s*([A-Za-z][^:]*?)\s*:\s*(\S+)")
LATENCY = re.compile(r"^(Mean|Median|Std|P(\d+(?:\.\d+)?))\s+(TTFT|TPOT|ITL|E2EL)\s+\(ms\)$")
FIELDS = {
    "Successful requests": "completed",
    "Failed requests": "failed",
    "Benchmark duration (s)": "duration_s",
    "Total input tokens": "input_tokens_total",
    "Total generated tokens": "output_tokens_total",
    "Request throughput (req/s)": "request_throughput_per_s",
    "Request goodput (req/s)": "request_goodput_per_s",
    "Output token throughput (tok/s)": "output_tokens_per_s",
    "Total Token throughput (tok/s)": "total_tokens_per_s",
    "Total token throughput (tok/s)": "total_tokens_per_s",
}
# Printed before the block (or inside it by newer clients): the load the run was driven with.
RATE_LABELS = ("Traffic request rate", "Request rate configured (RPS)")
CONCURRENCY_LABEL = "Maximum request concurrency"


def _record(lines: list[str], preamble: dict, row_number: int) -> br.RunRecord:
    problems: list = []
    raw, values, found = dict(preamble), {}, {}
    for text in lines:
        match = LINE.match(text)
        if not match:
            continue
        label, value = match.groups()
        raw[label] = value
        latency = LATENCY.match(label)
        if label in FIELDS:
            values[FIELDS[label]] = br.number(value, label, problems)
        elif latency:
            stat, pct, metric = latency.groups()
            stat = br.percentile_label(pct) if pct else stat.lower()
            ms = br.number(value, label, problems)
            found[f"{stat}_{metric.lower()}"] = ms
            column = br.stat_column(metric.lower(), stat)
            if column:
                values[column] = ms
    rate = next((raw[k] for k in RATE_LABELS if k in raw), None)
    if rate is not None and rate.lower() in ("inf", "infinity"):
        values["request_rate_raw"] = "inf"
    elif rate is not None:
        values["request_rate_raw"] = rate
        values["request_rate_per_s"] = br.number(rate, "request rate", problems)
    if raw.get(CONCURRENCY_LABEL, "None") != "None":  # the client prints None when unlimited
        values["max_concurrency"] = br.whole_number(raw[CONCURRENCY_LABEL], CONCURRENCY_LABEL, problems)
    done = values.get("completed")
    if done:
        for total, mean in (("input_tokens_total", "mean_input_tokens"), ("output_tokens_total", "mean_output_tokens")):
            if values.get(total) is not None:
                values[mean] = values[total] / done
    return br.RunRecord(row_number=row_number, raw=raw, values=values, latency_stats_ms=found,
                        run_key=f"L{row_number}", problems=problems)


def parse(ctx: FileContext) -> ParseResult:
    """Every result block in the log becomes one run; a block cut off by the log's end is quarantined."""
    lines = read_text(ctx).splitlines()
    records, quarantined, preamble, i = [], [], {}, 0
    while i < len(lines):
        text = lines[i]
        if not HEADER.search(text):
            match = LINE.match(text)
            if match and (match.group(1) in RATE_LABELS or match.group(1) == CONCURRENCY_LABEL):
                preamble[match.group(1)] = match.group(2)
            i += 1
            continue
        start, body = i + 1, []
        i += 1
        while i < len(lines) and not END.match(lines[i].strip()):
            body.append(lines[i])
            i += 1
        if i >= len(lines):
            quarantined.append(br.quarantine_line(start, "TRUNCATED", f"the result block starting on line {start} has no closing '=====' line", "\n".join(body)))
        else:
            records.append(_record(body, preamble, start))
        preamble = {}
        i += 1
    if not records and not quarantined:
        raise FileRejected("SCHEMA_DRIFT", "no 'Serving Benchmark Result' block found")
    extra = pl.DataFrame(quarantined, schema=QUARANTINE_COLUMNS) if quarantined else None
    return br.build(records, ctx, "vllm-serve-log", rows_in=len(records) + len(quarantined), quarantined=extra)

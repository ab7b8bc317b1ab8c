"""vllm-serve-log: the "Serving Benchmark Result" blocks benchmark_serving.py prints (one run each)."""
import re

import polars as pl

from flows.ingest.adapters import bench_runs as br
from flows.ingest.adapters import run_record as rr
from flows.ingest.adapters.base import FileContext, FileRejected, ParseResult
from flows.ingest.adapters.file_limits import LongLine, read_capped_lines
from flows.ingest.adapters.quarantine import QUARANTINE_COLUMNS

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


def _record(lines: list[str], preamble: dict, row_number: int) -> rr.RunRecord:
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
            values[FIELDS[label]] = rr.number(value, label, problems)
        elif latency:
            stat, pct, metric = latency.groups()
            stat = rr.percentile_label(pct) if pct else stat.lower()
            ms = rr.number(value, label, problems)
            found[f"{stat}_{metric.lower()}"] = ms
            column = rr.stat_column(metric.lower(), stat)
            if column:
                values[column] = ms
    rate = next((raw[k] for k in RATE_LABELS if k in raw), None)
    if rate is not None and rate.lower() in ("inf", "infinity"):
        values["request_rate_raw"] = "inf"
    elif rate is not None:
        values["request_rate_raw"] = rate
        values["request_rate_per_s"] = rr.number(rate, "request rate", problems)
    if raw.get(CONCURRENCY_LABEL, "None") != "None":  # the client prints None when unlimited
        values["max_concurrency"] = rr.whole_number(raw[CONCURRENCY_LABEL], CONCURRENCY_LABEL, problems)
    done = values.get("completed")
    if done:
        for total, mean in (("input_tokens_total", "mean_input_tokens"), ("output_tokens_total", "mean_output_tokens")):
            if values.get(total) is not None:
                values[mean] = values[total] / done
    return rr.RunRecord(row_number=row_number, raw=raw, values=values, latency_stats_ms=found,
                        run_key=f"L{row_number}", problems=problems)


def _is_metric(text: str) -> bool:
    """A result line (a field or a latency statistic), as opposed to the next run's preamble or noise."""
    match = LINE.match(text)
    return bool(match) and (match.group(1) in FIELDS or bool(LATENCY.match(match.group(1))))


def _preamble(lines: list[str]) -> dict:
    """The load settings (rate, concurrency) printed in these lines."""
    found = {}
    for text in lines:
        match = LINE.match(text)
        if match and (match.group(1) in RATE_LABELS or match.group(1) == CONCURRENCY_LABEL):
            found[match.group(1)] = match.group(2)
    return found


def parse(ctx: FileContext) -> ParseResult:
    """Every result block in the log becomes one run; a block cut off (by the log's end or by the next
    block's header) is quarantined as TRUNCATED, and the next block still parses."""
    # Read in chunks; a line over the record cap (a progress bar redrawn with '\\r' for hours) is only its head.
    lines = [line.head if isinstance(line, LongLine) else line for line in read_capped_lines(ctx)]
    records, quarantined, preamble, i = [], [], {}, 0
    while i < len(lines):
        if not HEADER.search(lines[i]):
            preamble.update(_preamble([lines[i]]))
            i += 1
            continue
        start, body = i + 1, []
        i += 1
        # A block is delimited by headers: it ends at its closing '=====' line, or is cut off by the
        # log's end or by the next header (a killed client's log followed by the next run's).
        while i < len(lines) and not END.match(lines[i].strip()) and not HEADER.search(lines[i]):
            body.append(lines[i])
            i += 1
        if i < len(lines) and END.match(lines[i].strip()):
            records.append(_record(body, preamble, start))
            preamble = {}
            i += 1
            continue
        # Cut off: what follows its last result line is the next run's preamble, not this block's.
        last = max((n for n, text in enumerate(body) if _is_metric(text)), default=-1)
        where = f"line {i + 1} starts the next block" if i < len(lines) else "the log ends"
        quarantined.append(rr.quarantine_line(
            start, "TRUNCATED", f"line {start}: the result block has no closing '=====' line ({where})",
            "\n".join(body[:last + 1])))
        preamble = _preamble(body[last + 1:])
    if not records and not quarantined:
        raise FileRejected("SCHEMA_DRIFT", "no 'Serving Benchmark Result' block found")
    extra = pl.DataFrame(quarantined, schema=QUARANTINE_COLUMNS) if quarantined else None
    return br.build(records, ctx, "vllm-serve-log", rows_in=len(records) + len(quarantined), quarantined=extra)

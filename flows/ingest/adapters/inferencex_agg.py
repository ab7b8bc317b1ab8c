"""inferencex-agg: InferenceX aggregate results (agg_*.json object or agg_bmk.json array).

Throughputs there are per GPU and latencies in seconds; both are converted here, once."""
import math
import re

from flows.ingest.adapters import bench_runs as br
from flows.ingest.adapters import run_record as rr
from flows.ingest.adapters.base import FileContext, FileRejected, ParseResult
from flows.ingest.adapters.json_text import read_document

LATENCY_KEY = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el)$")


def _gpus(doc: dict, problems: list) -> tuple[float | None, float | None, float | None]:
    """(all GPUs, prefill GPUs, decode GPUs) as utils/process_result.py counts them."""
    if doc.get("is_multinode") or doc.get("disagg") is True:
        prefill = rr.number(doc.get("num_prefill_gpu"), "num_prefill_gpu", problems)
        decode = rr.number(doc.get("num_decode_gpu"), "num_decode_gpu", problems)
        total = prefill + decode if prefill is not None and decode is not None else None
        return total, prefill, decode
    parts = [rr.number(doc.get(k, 1), k, problems) for k in ("tp", "pp", "pcp_size")]
    if doc.get("tp") is None or any(p is None for p in parts):
        return None, None, None
    total = parts[0] * parts[1] * parts[2]  # DCP does not add GPUs
    return total, total, total


def _count_text(gpu_count: float | None) -> str | None:
    """The GPU count as the count rule reads it: '8' for 8.0; '2.5', 'nan' or 'inf' stay visible as such."""
    if gpu_count is None:
        return None
    return str(int(gpu_count)) if math.isfinite(gpu_count) and gpu_count == int(gpu_count) else str(gpu_count)


def _whole(per_gpu, gpu_count, name: str, problems: list) -> float | None:
    value = rr.number(per_gpu, name, problems)
    return None if value is None or gpu_count is None else value * gpu_count


def _record(doc: dict, index: int) -> rr.RunRecord:
    problems: list = []
    num = lambda k: rr.number(doc.get(k), k, problems)  # noqa: E731
    gpu_count, prefill, decode = _gpus(doc, problems)
    columns, found = {}, {}
    for key, value in doc.items():
        match = LATENCY_KEY.match(key)
        if match:
            stat, metric = match.groups()
            stat = stat if not stat.startswith("p") else rr.percentile_label(stat[1:])
            seconds = rr.number(value, key, problems)
            ms = None if seconds is None else seconds * 1000  # InferenceX stores seconds
            found[f"{stat}_{metric}"] = ms
            if rr.stat_column(metric, stat):
                columns[rr.stat_column(metric, stat)] = ms
    # Whole-system rates: the *_tps keys when present, else per-GPU × the GPUs the rate was divided by.
    output = num("output_tput_tps") if doc.get("output_tput_tps") is not None else _whole(
        doc.get("output_tput_per_gpu"), decode, "output_tput_per_gpu", problems)
    total = num("total_tput_tps") if doc.get("total_tput_tps") is not None else _whole(
        doc.get("tput_per_gpu"), gpu_count, "tput_per_gpu", problems)
    completed = num("num_requests_successful") if doc.get("num_requests_successful") is not None else num("total_requests_completed")
    values = {
        "completed": completed, "attempted": num("num_requests_total"), "duration_s": num("duration_seconds"),
        "max_concurrency": rr.whole_number(doc.get("conc"), "conc", problems),
        "input_len_tokens": rr.whole_number(doc.get("isl"), "isl", problems),
        "output_len_tokens": rr.whole_number(doc.get("osl"), "osl", problems),
        "input_tokens_total": num("total_prompt_tokens"), "output_tokens_total": num("total_generation_tokens"),
        "mean_input_tokens": num("mean_input_tokens"), "mean_output_tokens": num("mean_output_tokens_actual"),
        "output_tokens_per_s": output, "total_tokens_per_s": total,
        "scenario": doc.get("scenario_type") if isinstance(doc.get("scenario_type"), str) else None,
        **columns,
    }
    extra = {k: doc[k] for k in ("image", "infmax_model_prefix", "spec_decoding", "disagg", "tp", "pp", "ep",
                                 "dp_attention", "recipe_fingerprint", "tput_per_gpu", "output_tput_per_gpu",
                                 "input_tput_per_gpu") if doc.get(k) is not None}
    return rr.RunRecord(
        row_number=index, raw=dict(doc), values=values,
        file_meta={"gpu_model": doc.get("hw"), "gpu_count": _count_text(gpu_count),
                   "model_id": doc.get("model"), "precision": doc.get("precision"), "engine": doc.get("framework")},
        extra_meta=extra, latency_stats_ms=found,
        run_key=f"{doc.get('hw')}-{doc.get('framework')}-tp{doc.get('tp')}-conc{doc.get('conc')}-{index}",
        problems=problems,
    )


def parse(ctx: FileContext) -> ParseResult:
    """One result object, or the collected array of them (one run each)."""
    doc = read_document(ctx)
    items = doc if isinstance(doc, list) else [doc]
    if not items or not all(isinstance(x, dict) and "hw" in x for x in items):
        raise FileRejected("SCHEMA_DRIFT", "expected an InferenceX result object (with 'hw') or an array of them")
    return br.build([_record(x, i) for i, x in enumerate(items, start=1)], ctx, "inferencex-agg")

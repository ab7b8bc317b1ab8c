"""vllm-throughput: `vllm bench throughput --output-json` (five keys; tokens count prompt + output)."""
from flows.ingest.adapters import bench_runs as br
from flows.ingest.adapters import run_record as rr
from flows.ingest.adapters.base import FileContext, FileRejected, ParseResult
from flows.ingest.adapters.json_text import read_document

KEYS = {"elapsed_time", "num_requests", "total_num_tokens", "requests_per_second", "tokens_per_second"}


def parse(ctx: FileContext) -> ParseResult:
    """One offline throughput run; every request of an offline run completes (no failed count)."""
    doc = read_document(ctx)
    if not isinstance(doc, dict):
        raise FileRejected("SCHEMA_DRIFT", f"expected one JSON object, found a {type(doc).__name__}")
    missing = KEYS - set(doc)
    if missing:
        raise FileRejected("SCHEMA_DRIFT", f"not a vllm bench throughput result: missing {sorted(missing)}")
    problems: list = []
    num = lambda k: rr.number(doc.get(k), k, problems)  # noqa: E731
    values = {
        "completed": num("num_requests"), "attempted": num("num_requests"), "duration_s": num("elapsed_time"),
        "request_throughput_per_s": num("requests_per_second"),
        # tokens_per_second = (prompt + output tokens) / elapsed: a total rate, never an output rate.
        "total_tokens_per_s": num("tokens_per_second"),
    }
    extra = {k: v for k, v in doc.items() if k not in KEYS}
    rec = rr.RunRecord(row_number=1, raw=dict(doc), values=values, extra_meta=extra, problems=problems)
    return br.build([rec], ctx, "vllm-throughput")

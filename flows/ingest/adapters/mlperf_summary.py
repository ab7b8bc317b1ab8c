"""mlperf-summary: MLPerf Inference mlperf_log_summary.txt, with the system JSON found by layout.

Layout: <submitter>/results/<system>/<benchmark>/<Scenario>/performance/run_1/mlperf_log_summary.txt
and <submitter>/systems/<system>.json. Latencies there are in ns; tokens/s are output tokens of the
whole system."""
import re
from pathlib import Path, PurePath

from flows.ingest.adapters import bench_runs as br
from flows.ingest.adapters import run_record as rr
from flows.ingest.adapters.base import FileContext, FileRejected, ParseResult
from flows.ingest.adapters.file_limits import DEFAULT_MAX_DOCUMENT_BYTES, check_json_nesting, physical_lines
from flows.ingest.adapters.json_text import loads, read_text

LINE = re.compile(r"^\s*([^:]+?)\s*:\s*(.+?)\s*$")
# The statistic and metric of a latency line, e.g. "99.00 percentile first token latency (ns)".
LATENCY = re.compile(r"^(min|max|mean|(\d+(?:\.\d+)?) percentile) (latency|first token latency|time to output token) \(ns\)$")
METRICS = {"latency": "e2el", "first token latency": "ttft", "time to output token": "tpot"}
# Offline and Server spell their headline rates differently.
SAMPLES_PER_S = ("Completed samples per second", "Samples per second")
TOKENS_PER_S = ("Completed tokens per second", "Tokens per second")
FRAMEWORK = re.compile(r"^\s*(vLLM|SGLang|TensorRT-LLM|TensorRT|PyTorch|ROCm|MIGraphX)\s+(\S+)\s*$", re.I)
# NVIDIA's system JSONs state the CUDA runtime and the driver in other_software_stack, e.g.
# "TensorRT 10.2.0, CUDA 12.4, cuDNN 8.9.7, Driver 550.54" (closed/NVIDIA/systems/H200-SXM-141GBx8_TRT.json).
NVIDIA_STACK = re.compile(r"^\s*(CUDA|Driver)\s+(\d+(?:\.\d+)*)\s*$", re.I)


def layout(path: str) -> tuple[str, str, str] | None:
    """(submitter dir, system, benchmark) from a summary's path in the results layout, else None."""
    parts = PurePath(path).parts
    if len(parts) >= 7 and parts[-7] == "results":
        return str(PurePath(*parts[:-7])) if len(parts) > 7 else "", parts[-6], parts[-5]
    return None


def system_json_path(path: Path) -> list[Path]:
    """The systems/<system>.json companion of a summary, if it exists next to the results tree."""
    found = layout(str(path))
    if not found:
        return []
    candidate = Path(found[0]) / "systems" / f"{found[1]}.json"
    return [candidate] if candidate.is_file() else []


def _system(ctx: FileContext, system: str, problems: list) -> dict:
    """The system JSON landed with this summary (matched by its layout name), or {}."""
    suffix = str(PurePath("systems", f"{system}.json"))
    for original, landed in ctx.companions.items():
        if original.endswith(suffix):
            size = Path(landed).stat().st_size
            if size > (ctx.defaults.get("max_file_bytes") or DEFAULT_MAX_DOCUMENT_BYTES):  # parsed whole: memory
                problems.append(("SYSTEM_JSON_INVALID", f"{suffix} is {size:,} bytes, over the document cap"))
                return {}
            try:
                text = Path(landed).read_text(encoding="utf-8")
                check_json_nesting(text, suffix)
                doc = loads(text)
            except FileRejected as exc:
                problems.append(("SYSTEM_JSON_INVALID", f"{suffix}: {exc.detail}"))
                return {}
            except (ValueError, UnicodeDecodeError) as exc:
                problems.append(("SYSTEM_JSON_INVALID", f"{suffix}: {str(exc).splitlines()[0]}"))
                return {}
            if isinstance(doc, dict):
                return doc
            problems.append(("SYSTEM_JSON_INVALID", f"{suffix} is not a JSON object"))
    return {}


def software(framework: str | None) -> dict:
    """'vLLM 0.4.3+rocm614, PyTorch 2.3.0, ROCm 6.1.2' → engine, engine_version, rocm_version.

    'TensorRT 10.2.0, CUDA 12.4' → engine tensorrt 10.2.0, as the system JSON names it (no -LLM is
    assumed); CUDA is nvidia_stack's."""
    out = {}
    for part in (framework if isinstance(framework, str) else "").split(","):
        match = FRAMEWORK.match(part)
        if not match:
            continue
        name, version = match.group(1).lower(), match.group(2)
        if name == "rocm":
            out["rocm_version"] = version
        elif name in ("vllm", "sglang", "tensorrt-llm", "tensorrt", "migraphx") and "engine" not in out:
            out["engine"], out["engine_version"] = name, version
    return out


def nvidia_stack(framework: str | None, other: str | None) -> dict:
    """The CUDA runtime and GPU driver versions the system JSON states (framework first), else nothing."""
    out = {}
    for text in (framework, other):
        for part in (text if isinstance(text, str) else "").split(","):
            match = NVIDIA_STACK.match(part)
            if match:
                key = "cuda_version" if match.group(1).lower() == "cuda" else "gpu_driver_version"
                out.setdefault(key, match.group(2))
    return out


def parse(ctx: FileContext) -> ParseResult:
    """One summary = one run (a scenario of a benchmark on a system)."""
    text = read_text(ctx, "MLPerf summary")
    fields: dict = {}
    for line in physical_lines(text):
        match = LINE.match(line)
        if match:
            fields.setdefault(match.group(1), match.group(2))  # the headline rate is printed twice
    scenario = fields.get("Scenario")
    if not scenario or "Result is" not in fields:
        raise FileRejected("SCHEMA_DRIFT", "not an MLPerf log summary: no 'Scenario' or 'Result is' line")
    problems: list = []
    values, found = {"scenario": scenario, "result_valid": fields["Result is"].upper() == "VALID"}, {}
    for key, value in fields.items():
        match = LATENCY.match(key.lower())
        if match:
            stat = rr.percentile_label(match.group(2)) if match.group(2) else match.group(1)
            metric = METRICS[match.group(3)]
            ns = rr.number(value, key, problems)
            ms = None if ns is None else ns / 1e6  # ns → ms
            found[f"{stat}_{metric}"] = ms
            if rr.stat_column(metric, stat):
                values[rr.stat_column(metric, stat)] = ms
    rate = next((fields[k] for k in SAMPLES_PER_S if k in fields), None)
    tokens = next((fields[k] for k in TOKENS_PER_S if k in fields), None)
    values["request_throughput_per_s"] = rr.number(rate, "samples per second", problems)
    values["output_tokens_per_s"] = rr.number(tokens, "tokens per second", problems)
    if scenario.lower() == "server" and fields.get("target_qps") is not None:
        values["request_rate_per_s"] = rr.number(fields["target_qps"], "target_qps", problems)
        values["request_rate_raw"] = fields["target_qps"]
    where = layout(ctx.original_path)
    system_name, benchmark = (where[1], where[2]) if where else (None, None)
    values["label"] = benchmark
    system = _system(ctx, system_name, problems) if system_name else {}
    nodes = system.get("number_of_nodes") or 1
    per_node = system.get("accelerators_per_node")
    file_meta = {"gpu_model": system.get("accelerator_model_name"),
                 "gpu_count": per_node * nodes if isinstance(per_node, int) and isinstance(nodes, int) else None,
                 # Only a count the system JSON states: a missing one is unknown, not 1.
                 "node_count": system.get("number_of_nodes"),
                 **software(system.get("framework"))}
    # CUDA and driver facts are kept as stated (metadata_json → benchmark_runs.cuda_version and
    # gpu_driver_version); never inferred from the GPU's vendor.
    stack = nvidia_stack(system.get("framework"), system.get("other_software_stack"))
    extra = {k: v for k, v in {
        "system": system_name, "benchmark": benchmark, "mode": fields.get("Mode"),
        "system_name": system.get("system_name"), "submitter": system.get("submitter"),
        "framework": system.get("framework"), "other_software_stack": system.get("other_software_stack"),
        **stack, "target_qps": fields.get("target_qps"),
        "system_json": "found" if system else "not found",
    }.items() if v is not None}
    rec = rr.RunRecord(
        row_number=1, raw={k: v for k, v in fields.items()}, values=values, file_meta=file_meta,
        extra_meta=extra, latency_stats_ms=found,
        run_key="/".join(x for x in (system_name, benchmark, scenario) if x), problems=problems,
    )
    return br.build([rec], ctx, "mlperf-summary")

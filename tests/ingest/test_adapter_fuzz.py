"""Generative tests for every adapter (ADAPTERS): mutated real samples never crash staging or lose rows.

Each format starts from real samples in tests/fixtures and data/samples. Structured formats (JSON,
JSON Lines) get a value anywhere in the document swapped for a hostile one (another type, huge and
tiny numbers, NaN/±Inf, deep nesting, unicode line separators); text formats (CSV, YAML, logs,
MLPerf summaries) get a token replaced, text inserted (U+2028, U+0085, quotes, YAML syntax), a line
dropped or repeated, or the file cut short. Every file then goes through landing and stage_file:

- nothing raises, and no file is rejected by the error boundary (ADAPTER_ERROR, CONTRACT_ERROR,
  ROWS_NOT_CONSERVED): bad input is a named rejection or quarantined rows;
- a loaded file conserves rows (rows_in = accepted + quarantined) and every quarantine row names
  its file, its row and, in its detail, what was wrong;
- a rejected file is in the manifest with a reason code and a message.

Examples are bounded and derandomized (the same inputs on every run, CI-stable); set
PROVIDER_EVAL_FUZZ_EXAMPLES to explore further locally.
"""
import datetime as dt
import json
import math
import os
import re
import shutil
import tempfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flows.ingest.adapters import ADAPTERS
from flows.ingest.land import land_file
from flows.ingest.stage import stage_file
from provider_eval.paths import DATA_DIR
from tests.conftest import FIXTURES

NOW = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.timezone.utc)
BENCH, CATALOGS = FIXTURES / "benchmarks", DATA_DIR / "samples" / "quotes" / "catalogs"
MLPERF_ROOT = FIXTURES / "benchmarks" / "mlperf_v4.1" / "closed" / "AMD"
MLPERF_SUMMARY = Path("results/8xMI300X_2xEPYC-9374F/llama2-70b-99/Offline/performance/run_1/mlperf_log_summary.txt")
MLPERF_SYSTEM = Path("systems/8xMI300X_2xEPYC-9374F.json")
BOUNDARY_CODES = {"ADAPTER_ERROR", "CONTRACT_ERROR", "ROWS_NOT_CONSERVED", "WORKER_ERROR"}
BENCH_DEFAULTS = {"gpu_model": "MI300X", "gpu_count": 8}

# format → (kind of mutation, real samples, sources.yaml defaults)
SAMPLES = {
    "quote-csv": ("text", [DATA_DIR / "samples/quotes/seed_000_example.csv", FIXTURES / "quotes/good.csv"],
                  {"currency": "USD"}),
    "run-csv": ("text", [DATA_DIR / "samples/benchmarks/seed_000_runs.csv"], {}),
    "quote-yaml": ("text", [DATA_DIR / "samples/quotes/runpod_tensorwave.yaml",
                            FIXTURES / "quotes/yaml/quote_multi.yaml"], {}),
    "vllm-serve": ("json", [BENCH / "vllm_serve_current_mi300x.json",
                            BENCH / "vllm_serve_result_llama3.3-70b_tp8_A100_scalars.json"], BENCH_DEFAULTS),
    "vllm-serve-log": ("text", [BENCH / "vllm_serve_sweep_mi325x.log"], {"gpu_model": "MI325X", "gpu_count": 8}),
    "vllm-throughput": ("json", [BENCH / "vllm_throughput_mi300x.json"], BENCH_DEFAULTS),
    "sglang-serving": ("jsonl", [BENCH / "sglang_serving_mi355x.jsonl"], {"gpu_model": "MI355X", "gpu_count": 8}),
    "mlperf-summary": ("mlperf", [MLPERF_ROOT / MLPERF_SUMMARY], {"model_id": "llama-2-70b"}),
    "inferencex-agg": ("json", [BENCH / "inferencex_agg_bmk.json",
                                BENCH / "inferencex_mi355x_glm5.1_fp4_sglang_tp2_conc16.json"], {}),
    "skypilot-catalog": ("text", [CATALOGS / "skypilot_v6_do_vms.csv", CATALOGS / "skypilot_v8_lambda_vms_excerpt.csv"],
                         {"provider": "digitalocean"}),
    "digitalocean-sizes": ("json", [CATALOGS / "digitalocean_v2_sizes.json"], {"provider": "digitalocean"}),
    "vultr-plans": ("json", [CATALOGS / "vultr_v2_plans.json", CATALOGS / "vultr_v2_plans_metal.json"],
                    {"provider": "vultr"}),
    "hotaisle-available": ("json", [CATALOGS / "hotaisle_available_vms.json"], {"provider": "hotaisle"}),
    "runpod-gputypes": ("json", [CATALOGS / "runpod_gputypes.json", FIXTURES / "catalogs/runpod_gputypes.json"],
                        {"provider": "runpod"}),
    "vastai-offers": ("json", [FIXTURES / "catalogs/vastai_offers.json"], {"provider": "vastai"}),
    "model-config": ("json", [FIXTURES / "models/qwen3-30b-a3b_config.json"],
                     {"model_id": "qwen3-30b-a3b", "hf_repo_id": "Qwen/Qwen3-30B-A3B"}),
    "gpuhunt-catalog": ("text", [CATALOGS / "gpuhunt_crusoe.csv", FIXTURES / "catalogs/gpuhunt_catalog.csv"], {}),
    # A validate-host record and its raw probe output (tests/fixtures/validations/SOURCES.md).
    "probe-json": ("json", [FIXTURES / "validations/val-2cae4f97d4ac7fec.json"], {}),
}

SEPARATORS = ["\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\x1c", "\r", "\r\n", "\ufeff", "\x00"]
HOSTILE_VALUES = [
    None, True, False, 0, -1, 2**31, 2**31 + 7, 2**63, 10**400, -(10**400), 1e-300, 5e-324, 1e308, -0.0,
    math.nan, math.inf, -math.inf, "", " ", "eight", "N/A", "NaN", "Infinity", "-inf", "1e400", "0123",
    "2026-02-30", "9" * 401, [], {}, [8], [1, 2], {"a": 1}, {"count": "8"}, *[f"a{s}b" for s in SEPARATORS],
]
HOSTILE_TOKENS = [
    "eight", "NaN", "nan", "inf", "-inf", "Infinity", "1e400", "1e-300", "5e-324", "-0", "0", "-1",
    str(2**31 + 1), str(2**63), "9" * 401, "", "0123", "010", "NO", "yes", "on", "2:29", "2026-02-30",
    "[8]", "{a: 1}", "? [a, b]", "&a", "*a", "!!python/object:os.system", "- ", ": ", "#", '"', "'",
    "\t", "é", "Н100", "MI300X\u00a0", "=" * 50, "Serving Benchmark Result", "Result is : VALID",
    *SEPARATORS,
]


def nested(depth: int):
    value = 1
    for _ in range(depth):
        value = [value] if depth % 2 else {"k": value}
    return value


hostile_value = st.one_of(
    st.sampled_from(HOSTILE_VALUES), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12), st.integers(min_value=2, max_value=90).map(nested),
)


def paths(doc, prefix=()):
    """Every place in a JSON document a value could be swapped (containers included)."""
    yield prefix
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from paths(value, prefix + (key,))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from paths(value, prefix + (i,))


def swapped(doc, path: tuple, value):
    if not path:
        return value
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return doc


def mutate_json(data, text: str) -> str:
    doc = json.loads(text)
    path = data.draw(st.sampled_from(list(paths(doc))), label="path")
    doc = swapped(doc, path, data.draw(hostile_value, label="value"))
    if data.draw(st.booleans(), label="also a key"):
        doc = {str(data.draw(st.sampled_from(HOSTILE_TOKENS))): 1, **doc} if isinstance(doc, dict) else doc
    return json.dumps(doc, ensure_ascii=data.draw(st.booleans(), label="ascii"), allow_nan=True)


def mutate_jsonl(data, text: str) -> str:
    lines = text.split("\n")
    objects = [i for i, line in enumerate(lines) if line.strip().startswith("{")]
    i = data.draw(st.sampled_from(objects), label="line")
    try:
        lines[i] = mutate_json(data, lines[i])
    except json.JSONDecodeError:  # the sample's deliberately bad line: mutate it as text
        lines[i] = mutate_text(data, lines[i])
    return "\n".join(lines)


def mutate_text(data, text: str) -> str:
    op = data.draw(st.sampled_from(["replace", "insert", "truncate", "drop_line", "repeat_line"]), label="op")
    if op == "truncate":
        return text[:data.draw(st.integers(0, len(text)), label="cut")]
    lines = text.split("\n")
    n = data.draw(st.integers(0, len(lines) - 1), label="line")
    if op == "drop_line":
        return "\n".join(lines[:n] + lines[n + 1:])
    if op == "repeat_line":
        return "\n".join(lines[:n + 1] + lines[n:])
    token = data.draw(st.one_of(st.sampled_from(HOSTILE_TOKENS), st.text(max_size=8)), label="token")
    if op == "insert":
        at = data.draw(st.integers(0, len(lines[n])), label="at")
        lines[n] = lines[n][:at] + token + lines[n][at:]
    else:  # replace one field/value of the line (a CSV cell, a YAML or log value)
        spans = [m.span() for m in re.finditer(r"[^,:\s\[\]{}]+", lines[n])]
        if spans:
            start, end = data.draw(st.sampled_from(spans), label="span")
            lines[n] = lines[n][:start] + token + lines[n][end:]
    return "\n".join(lines)


def check(fmt: str, path: Path, defaults: dict, work: Path, companions: list[Path] = ()) -> None:
    """Land and stage one file; the outcome is a named rejection or loaded rows that are all accounted for."""
    landed = land_file("fuzz", path, work / "landing", NOW, companions=list(companions))
    out = stage_file(landed, fmt, defaults, work / "staged")
    if out.status == "rejected":
        code, _, detail = (out.reason or "").partition(": ")
        assert re.fullmatch(r"[A-Z][A-Z_]+", code) and detail, out.reason
        assert code not in BOUNDARY_CODES, out.reason  # the boundary holds, but no adapter should need it
        assert out.rows_in == out.rows_accepted == out.rows_quarantined == 0
        return
    assert out.status == "loaded", out
    accepted, quarantined = pl.read_parquet(out.accepted_parquet), pl.read_parquet(out.quarantine_parquet)
    assert out.rows_in == accepted.height + quarantined.height == out.rows_accepted + out.rows_quarantined
    if quarantined.height:
        assert set(quarantined["source_file"]) == {path.name}
        assert quarantined["row_number"].null_count() == 0
        assert quarantined["reason_code"].str.contains(r"^[A-Z][A-Z_]+$").all()
        assert (quarantined["detail"].str.len_chars() > 0).all()


def fuzz(fmt: str, max_examples: int):
    kind, samples, defaults = SAMPLES[fmt]
    texts = [p.read_text(encoding="utf-8") for p in samples]

    @settings(max_examples=max_examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def run(data):
        i = data.draw(st.integers(0, len(texts) - 1), label="sample")
        mutate = {"json": mutate_json, "jsonl": mutate_jsonl, "text": mutate_text, "mlperf": mutate_text}[kind]
        if kind == "json" and data.draw(st.integers(0, 4), label="as text") == 0:
            mutate = mutate_text  # truncation, stray separators and bytes in JSON too
        text = mutate(data, texts[i])
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            if kind == "mlperf":
                root = work / "closed" / "AMD"
                path = root / MLPERF_SUMMARY
                path.parent.mkdir(parents=True)
                (root / MLPERF_SYSTEM).parent.mkdir(parents=True)
                system = (MLPERF_ROOT / MLPERF_SYSTEM).read_text(encoding="utf-8")
                if data.draw(st.booleans(), label="mutate the system JSON instead"):
                    text, system = texts[i], mutate_json(data, system)
                (root / MLPERF_SYSTEM).write_text(system, encoding="utf-8")
                path.write_text(text, encoding="utf-8", newline="")
                check(fmt, path, defaults, work, ADAPTERS[fmt].companions(path))
            else:
                path = work / samples[i].name
                path.write_text(text, encoding="utf-8", newline="")
                _copy_companions(fmt, samples[i], path)
                check(fmt, path, defaults, work, ADAPTERS[fmt].companions(path) if ADAPTERS[fmt].companions else [])

    return run


def _copy_companions(fmt: str, sample: Path, path: Path) -> None:
    """The unmutated companions of a sample (a probe record's raw probe output) beside its mutated copy."""
    companions = ADAPTERS[fmt].companions
    for companion in companions(sample) if companions else []:
        target = path.parent / companion.relative_to(sample.parent)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(companion, target)


def test_every_adapter_has_samples():
    assert set(SAMPLES) == set(ADAPTERS)
    for _, samples, _ in SAMPLES.values():
        assert all(p.is_file() for p in samples)


@pytest.mark.parametrize("fmt", sorted(SAMPLES))
def test_mutated_samples_never_crash_or_lose_rows(fmt):
    fuzz(fmt, max_examples=int(os.environ.get("PROVIDER_EVAL_FUZZ_EXAMPLES", "25")))()


def test_samples_load_unmutated(tmp_path):
    # The starting points are themselves good inputs: the mutations are what the test is about.
    for fmt, (kind, samples, defaults) in SAMPLES.items():
        for i, sample in enumerate(samples):
            if kind == "mlperf":
                continue  # staged with its layout by the fuzz test itself
            work = tmp_path / fmt / str(i)
            work.mkdir(parents=True)
            path = work / sample.name
            shutil.copy(sample, path)
            _copy_companions(fmt, sample, path)
            check(fmt, path, defaults, work, ADAPTERS[fmt].companions(path) if ADAPTERS[fmt].companions else [])

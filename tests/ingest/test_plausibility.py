"""Physically impossible values are quarantined (IMPLAUSIBLE_VALUE, naming file row and field), never
ranked (issue 23): every benchmark format's real-shaped file with one value made impossible, through
its adapter and the benchmark_runs contract as staging runs them. Limits: data/reference/plausibility_limits.csv."""
import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from flows.ingest.adapters import ADAPTERS
from flows.ingest.validate import validate_frame
from models import CONTRACTS
from models.plausibility import limit
from provider_eval.paths import DATA_DIR
from tests.adapter_context import file_context
from tests.conftest import FIXTURES

BENCH = FIXTURES / "benchmarks"
MLPERF_TREE = BENCH / "mlperf_v4.1"
OFFLINE = Path("closed/AMD/results/8xMI300X_2xEPYC-9374F/llama2-70b-99/Offline/performance/run_1/mlperf_log_summary.txt")
SYSTEM = Path("closed/AMD/systems/8xMI300X_2xEPYC-9374F.json")


def _stage(fmt: str, path: Path, defaults: dict | None = None, companions: dict | None = None):
    """Adapter then contract, as flows/ingest/stage.py runs them: (accepted, every quarantined row)."""
    ctx = file_context(path, defaults, companions, first_seen_at="2026-11-30T00:00:00+00:00")
    result = ADAPTERS[fmt].parse(ctx)
    accepted, rejected = validate_frame(result.accepted, CONTRACTS[ADAPTERS[fmt].table])
    quarantined = pl.concat([result.quarantined, rejected])
    assert accepted.height + quarantined.height == result.rows_in  # no row lost
    return accepted, quarantined


def _edit(src: Path, dst: Path, old: str, new: str, count: int = 1) -> Path:
    text = src.read_text(encoding="utf-8")
    assert text.count(old) >= count, old
    dst.write_text(text.replace(old, new, count), encoding="utf-8")
    return dst


def _mlperf(tmp_path, old, new):
    shutil.copytree(MLPERF_TREE, tmp_path / "m")
    summary = tmp_path / "m" / OFFLINE
    _edit(summary, summary, old, new)
    system = str(tmp_path / "m" / SYSTEM)
    return "mlperf-summary", summary, {"model_id": "llama-2-70b", "precision": "fp8"}, {system: system}


def _vllm_json(tmp_path, key, value):
    doc = json.loads((BENCH / "vllm_serve_current_mi300x.json").read_text(encoding="utf-8"))
    doc[key] = value
    path = tmp_path / "vllm.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return "vllm-serve", path, {}, {}


def _vllm_log(tmp_path):
    path = _edit(BENCH / "vllm_serve_sweep_mi325x.log", tmp_path / "sweep.log",
                 "Benchmark duration (s):                  40.00", "Benchmark duration (s):                  1e-300")
    return "vllm-serve-log", path, {"gpu_model": "MI325X", "gpu_count": 8}, {}


def _sglang(tmp_path):
    path = _edit(BENCH / "sglang_serving_mi355x.jsonl", tmp_path / "sglang.jsonl", '"duration": 80.0', '"duration": 1e-300')
    return "sglang-serving", path, {"gpu_model": "MI355X", "gpu_count": 8}, {}


def _inferencex(tmp_path):
    path = _edit(BENCH / "inferencex_agg_bmk.json", tmp_path / "agg.json",
                 '"output_tput_per_gpu": 1500.0', '"output_tput_per_gpu": 1.5e12')
    return "inferencex-agg", path, {}, {}


def _run_csv(tmp_path):
    # The case: a 1e-300 s duration made MI300X rank first.
    path = _edit(DATA_DIR / "samples/benchmarks/seed_000_runs.csv", tmp_path / "runs.csv",
                 "jobs,1,36000,", "jobs,1,1e-300,")
    return "run-csv", path, {}, {}


CASES = {
    "mlperf output tokens/s ×1e8": (lambda t: _mlperf(t, "Tokens per second: 23514.8", "Tokens per second: 2351480000000"),
                                    "output_tokens_per_s"),
    "vllm json duration 1e-300 s": (lambda t: _vllm_json(t, "duration", 1e-300), "duration_s"),
    "vllm json output throughput": (lambda t: _vllm_json(t, "output_throughput", 1e15), "output_tokens_per_s"),
    "vllm log duration 1e-300 s": (_vllm_log, "duration_s"),
    "sglang duration 1e-300 s": (_sglang, "duration_s"),
    "inferencex output per GPU": (_inferencex, "output_tokens_per_s"),
    "run-csv duration 1e-300 s": (_run_csv, "duration_s"),
}


@pytest.mark.parametrize("case", CASES)
def test_an_impossible_value_is_quarantined_with_its_field(tmp_path, case):
    make, field = CASES[case]
    fmt, path, defaults, companions = make(tmp_path)
    accepted, quarantined = _stage(fmt, path, defaults, companions)
    implausible = quarantined.filter(pl.col("reason_code") == "IMPLAUSIBLE_VALUE")
    assert implausible.height == 1, quarantined
    row = implausible.row(0, named=True)
    assert row["row_number"] >= 1
    assert f"{field}: IMPLAUSIBLE_VALUE: {field}" in row["detail"], row["detail"]


@pytest.mark.parametrize("fmt, path, defaults", [
    ("mlperf-summary", MLPERF_TREE / OFFLINE, {"model_id": "llama-2-70b", "precision": "fp8"}),
    ("vllm-serve", BENCH / "vllm_serve_current_mi300x.json", {}),
    ("vllm-serve-log", BENCH / "vllm_serve_sweep_mi325x.log", {"gpu_model": "MI325X", "gpu_count": 8}),
    ("sglang-serving", BENCH / "sglang_serving_mi355x.jsonl", {"gpu_model": "MI355X", "gpu_count": 8}),
    ("inferencex-agg", BENCH / "inferencex_agg_bmk.json", {}),
    ("run-csv", DATA_DIR / "samples/benchmarks/seed_000_runs.csv", {}),
])
def test_the_real_files_as_published_are_plausible(fmt, path, defaults):
    system = str(MLPERF_TREE / SYSTEM)
    accepted, quarantined = _stage(fmt, path, defaults, {system: system})
    assert accepted.height >= 1
    assert "IMPLAUSIBLE_VALUE" not in quarantined["reason_code"].to_list()


def test_the_physical_ceiling_is_known_for_llama2_70b_on_mi300x():
    # 2 × 2,614.9 dense FP8 TFLOPS / (2 FLOPs × 68,976,648,192 params) ≈ 37,906 tokens/s per GPU,
    # 12.9× MLPerf v4.1's Offline 2,939 output tokens/s per GPU: ×13 passes, ×14 does not.
    from models.plausibility import tokens_per_s_per_gpu_ceiling

    ceiling = pl.DataFrame({"gpu_model": ["MI300X", "MI300X", "NoSuchGPU"],
                            "model_id": ["llama-2-70b", "meta-llama/Llama-2-70b-hf", "llama-2-70b"]}) \
        .select(tokens_per_s_per_gpu_ceiling()).to_series().to_list()
    assert ceiling[0] == ceiling[1] == pytest.approx(2 * 2614.9e12 / (2 * 68976648192))
    assert ceiling[2] == limit("tokens_per_s_per_gpu_generic")[1]


def test_a_quote_with_more_gpus_than_any_server_is_implausible(tmp_path):
    path = _edit(DATA_DIR / "samples/quotes/public_price_points.csv", tmp_path / "q.csv",
                 "hotaisle,hotaisle-mi300x-1,MI300X,1,1.99", "hotaisle,hotaisle-mi300x-1,MI300X,800,1.99")
    accepted, quarantined = _stage("quote-csv", path)
    [row] = quarantined.filter(pl.col("reason_code") == "IMPLAUSIBLE_VALUE").rows(named=True)
    assert row["row_number"] == 1  # the first data row
    assert row["detail"] == "gpus_per_node: IMPLAUSIBLE_VALUE: gpus_per_node above 64 GPUs per node failed for '800'"
    assert accepted.height == 8

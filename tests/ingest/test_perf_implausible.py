"""PERF_IMPLAUSIBLE: a run far above the best published MLPerf result for its GPU, model and precision
(data/reference/published_throughput_ceilings.csv) is flagged and not ranked until its source sets
perf_confirmed: true (issue 16). Built on the cost-model harness with the real matching models."""
import csv

import pytest

from flows.ingest.sources import load_sources
from models.plausibility import limit
from provider_eval.errors import ConfigError
from provider_eval.paths import REFERENCE_DIR
from tests.sql_chain import bench_run, build, offer, rows, workload

FACTOR = limit("perf_vs_published_factor")[1]
# The best published 8 × MI300X Llama-2-70B FP8 result: MLPerf v4.1 Offline, 23,514.8 tokens/s.
BEST = max(float(r["output_tokens_per_s"]) for r in csv.DictReader(
    (REFERENCE_DIR / "published_throughput_ceilings.csv").open(encoding="utf-8"))
    if (r["gpu_model"], r["model_id"], r["precision"]) == ("MI300X", "llama-2-70b", "fp8") and r["gpu_count"] == "8")


def _cost(times_best: float, model_id="llama-2-70b", precision="fp8", confirmed=False) -> dict:
    run = bench_run("typo", gpu_count=8, output_tokens_per_s=BEST * times_best, model_id=model_id,
                    precision=precision, engine="vllm", perf_confirmed=confirmed)
    con = build(workloads=[workload("w", kind="inference", unit="output_tokens", quantity=10**9,
                                    model_id=model_id, precision=precision)],
                offers=[offer("o", gpus_per_node=8, price=16)], bench_runs=[run])
    [row] = rows(con, "select * from workload_costs where throughput_source = 'measured'")
    [flag] = rows(con, "select * from int_benchmark_plausibility")
    return {**row, **{k: flag[k] for k in ("perf_vs_published_ratio", "is_perf_implausible", "perf_detail")}}


def test_the_published_best_is_the_real_mlperf_offline_result():
    assert BEST == 23514.8 and FACTOR == 5


def test_a_run_far_above_the_best_published_result_is_not_ranked():
    row = _cost(FACTOR * 1.02)
    assert row["is_perf_implausible"] and row["status"] == "excluded"
    assert row["exclusion_reasons"] == ["PERF_IMPLAUSIBLE"]
    assert row["perf_vs_published_ratio"] == pytest.approx(FACTOR * 1.02)
    assert "is 5.1× the best published MI300X llama-2-70b fp8 result (2939.35 per GPU" in row["perf_detail"]
    assert "PERF_IMPLAUSIBLE" in row["benchmark_match_detail"]


def test_a_run_within_the_factor_is_ranked():
    row = _cost(FACTOR * 0.98)
    assert not row["is_perf_implausible"] and row["status"] == "ranked"


def test_a_confirmed_run_is_ranked_and_still_shows_the_flag():
    row = _cost(FACTOR * 3, confirmed=True)
    assert row["is_perf_implausible"] and row["status"] == "ranked"
    assert row["perf_detail"].endswith("(confirmed: ranked)")


@pytest.mark.parametrize("model_id, precision", [("llama-3.1-405b", "fp8"), ("llama-2-70b", "bf16")])
def test_without_a_published_result_there_is_no_flag(model_id, precision):
    row = _cost(100, model_id=model_id, precision=precision)
    assert row["perf_vs_published_ratio"] is None and not row["is_perf_implausible"]
    assert row["status"] == "ranked"


def test_perf_confirmed_is_a_benchmark_source_boolean(tmp_path):
    path = tmp_path / "sources.yaml"
    base = "sources:\n  - name: a\n    kind: {kind}\n    format: {fmt}\n    path: x\n    perf_confirmed: {value}\n"
    path.write_text(base.format(kind="benchmarks", fmt="run-csv", value="true"), encoding="utf-8")
    (src,) = load_sources(path)
    assert src.adapter_options() == {"perf_confirmed": True}
    for kind, fmt, value, message in [("benchmarks", "run-csv", "'yes'", "must be true or false"),
                                      ("quotes", "quote-csv", "true", "benchmark sources only")]:
        path.write_text(base.format(kind=kind, fmt=fmt, value=value), encoding="utf-8")
        with pytest.raises(ConfigError, match=message):
            load_sources(path)

"""NO_BENCHMARK explained: the closest runs to a workload and every way each does not match it."""
import os
import subprocess
import sys

from tests.sql_chain import COST_MODEL, bench_run, build, offer, rows, workload


def closest(workloads, offers, runs) -> dict:
    con = build(workloads=workloads, offers=offers, bench_runs=runs, targets=COST_MODEL + ("int_workload_closest_runs",))
    return {r["run_id"]: r for r in rows(con, "select * from int_workload_closest_runs order by closeness_rank")}


CHAT = dict(kind="inference", unit="output_tokens", quantity=10**6, model_id="llama-3.1-70b", precision="fp8",
            engine="vllm", input_tokens=1000, output_tokens=200, shape_tolerance_pct=10.0,
            slo_json='{"ttft_p99_ms": 2000.0}')


def test_each_dimension_that_does_not_match_is_named_and_nearest_come_first():
    runs = [
        bench_run("other-model", model_id="llama-3.3-70b", precision="fp8", engine="vllm", gpu_count=8),
        bench_run("bf16-sglang", model_id="llama-3.1-70b", precision="bf16", engine="sglang", gpu_count=8),
        bench_run("long-prompts", model_id="llama-3.1-70b", precision="fp8", engine="vllm", gpu_count=8,
                  mean_input_tokens=4000.0, mean_output_tokens=200.0, ttft_p99_ms=1500.0),
        bench_run("slow", model_id="llama-3.1-70b", precision="fp8", engine="vllm", gpu_count=8,
                  mean_input_tokens=1000.0, mean_output_tokens=200.0, ttft_p99_ms=9000.0),
        bench_run("one-gpu", model_id="llama-3.1-70b", precision="fp8", engine="vllm", gpu_count=1,
                  mean_input_tokens=1000.0, mean_output_tokens=200.0, ttft_p99_ms=1000.0,
                  output_tokens_per_s=None, units_per_hour=36000.0),
    ]
    found = closest([workload("chat", **CHAT)], [offer("o8", gpus_per_node=8)], runs)
    assert found["other-model"]["mismatches"] == ["model: llama-3.3-70b ≠ llama-3.1-70b"]
    assert found["bf16-sglang"]["mismatches"] == ["precision: bf16 ≠ fp8", "engine: sglang ≠ vllm"]
    assert found["long-prompts"]["mismatches"] == ["mean input 4000.0 tokens, not within ±10.0% of 1000"]
    assert found["slow"]["mismatches"] == ["ttft_p99_ms 9000.0 ms > SLO 2000.0 ms"]
    # No output-token rate, and no 1-GPU configuration for this workload.
    assert found["one-gpu"]["mismatches"] == ["unit: measures requests, not output_tokens",
                                              "GPU: no configuration of this workload has 1 × MI300X"]
    ranks = [r for r in sorted(found, key=lambda k: found[k]["closeness_rank"])]
    assert [found[r]["mismatch_count"] for r in ranks] == sorted(found[r]["mismatch_count"] for r in ranks)


def test_only_the_five_closest_runs_are_kept_and_a_declared_run_vouches_for_its_identity():
    runs = [bench_run(f"r{i}", model_id=f"model-{i}", gpu_count=8) for i in range(7)]
    runs.append(bench_run("declared", workload_id="chat", gpu_count=8, mean_input_tokens=1000.0,
                          mean_output_tokens=200.0, ttft_p99_ms=100.0))
    found = closest([workload("chat", **CHAT)], [offer("o8", gpus_per_node=8)], runs)
    assert len(found) == 5
    assert found["declared"]["closeness_rank"] == 1 and found["declared"]["mismatches"] == []


def test_explain_prints_the_closest_runs_for_a_no_benchmark_workload(sample_warehouse):
    out = subprocess.run([sys.executable, "-m", "provider_eval", "explain", "llama31-70b-chat",
                          "-w", str(sample_warehouse)], capture_output=True, text=True, check=True,
                         env={**os.environ, "COLUMNS": "250"}).stdout
    assert "NO_BENCHMARK — the closest benchmark runs and what does not match" in out
    # The real MLPerf v4.1 MI300X runs are the nearest: another model and precision.
    assert "model: llama-2-70b ≠ llama-3.1-70b; precision: fp8 ≠ bf16" in out

    one = subprocess.run([sys.executable, "-m", "provider_eval", "explain", "llama31-70b-chat",
                          "--offer", "oracle-mi300x-8", "-w", str(sample_warehouse)],
                         capture_output=True, text=True, env={**os.environ, "COLUMNS": "250"})
    assert one.returncode == 0, one.stderr
    assert "NO_BENCHMARK — the closest benchmark runs" in one.stdout


def test_runs_alike_are_shortlisted_by_run_id_without_losing_a_closer_one():
    """Runs with one identity (model, precision, engine, GPU, units, declared workload) compare alike with a
    workload they are not candidates of: the lowest run ids of the identity are kept, whatever order the
    runs arrive in, and a closer run of another identity still comes first. The same runs are candidates
    of a second workload, ranked there by their own shape and SLO verdicts."""
    alike = [bench_run(f"alike-{i:02d}", model_id="llama-3.1-70b", precision="fp8", engine="vllm", gpu_count=8,
                       mean_input_tokens=1000.0 + 500 * (i % 2), mean_output_tokens=200.0, ttft_p99_ms=100.0)
             for i in (11, 3, 7, 0, 9, 5, 1, 8, 2, 10, 6, 4)]
    closer = bench_run("zz-closer", model_id="llama-3.3-70b", precision="fp8", engine="vllm", gpu_count=8,
                       mean_input_tokens=1000.0, mean_output_tokens=200.0, ttft_p99_ms=100.0)
    other = dict(CHAT, model_id="llama-3.3-70b")
    con = build(workloads=[workload("chat", **CHAT), workload("other", **other)],
                offers=[offer("o8", gpus_per_node=8)], bench_runs=[*alike, closer],
                targets=COST_MODEL + ("int_workload_closest_runs",))
    ranked = {w: [(r["run_id"], r["mismatch_count"]) for r in rows(
        con, "select * from int_workload_closest_runs where workload_id = ? order by closeness_rank", [w])]
        for w in ("chat", "other")}
    # For "other" every alike run is another model (one mismatch); the run of its own model has none.
    assert ranked["other"] == [("zz-closer", 0)] + [(f"alike-{i:02d}", 1) for i in range(4)]
    # For "chat" they are candidates: the even ones match its shape; the odd ones' input is 50 % off.
    assert ranked["chat"] == [(f"alike-{i:02d}", 0) for i in (0, 2, 4, 6, 8)]

"""Benchmark matching on tiny inputs: engine, input/output shape, SLOs, node count, median of several runs."""
import json
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flows.ingest.workloads import load_workloads
from provider_eval import sql_compiled
from provider_eval.errors import ConfigError
from provider_eval.paths import SQL_DIR
from tests.sql_chain import bench_run, build, offer, rows, workload


def chat(**extra):
    """An output-token workload of model m (1e6 tokens), the shape of the tests below unless overridden."""
    return workload("chat", kind="inference", unit="output_tokens", quantity=10**6, model_id="m", precision="bf16",
                    **extra)


def run(run_id, **extra):
    return bench_run(run_id, **{"model_id": "m", "precision": "bf16", **extra})


def matches(con):
    return {r["run_id"]: r for r in rows(con, "select * from int_workload_benchmark_matches")}


def costs(con):
    return {r["offer_id"]: r for r in rows(con, "select * from workload_costs where throughput_source = 'measured'")}


def test_engine_must_match_when_the_workload_names_one():
    runs = [run("vllm-run", engine="vllm", output_tokens_per_s=1000.0),
            run("sglang-run", engine="sglang", output_tokens_per_s=5000.0),
            run("silent-run", output_tokens_per_s=9000.0)]
    con = build(workloads=[chat(engine="vllm")], offers=[offer("o")], bench_runs=runs)
    found = matches(con)
    assert {k: v["match_status"] for k, v in found.items()} == {
        "vllm-run": "matched", "sglang-run": "mismatched", "silent-run": "mismatched"}
    assert found["sglang-run"]["mismatch_detail"] == "engine sglang ≠ vllm"
    assert found["silent-run"]["mismatch_detail"] == "engine not stated ≠ vllm"
    [row] = costs(con).values()
    assert row["benchmark_run_ids"] == ["vllm-run"] and row["units_per_hour"] == 1000.0 * 3600
    # A workload that names no engine takes every run: the median of the three.
    anyone = build(workloads=[chat()], offers=[offer("o")], bench_runs=runs)
    [row] = costs(anyone).values()
    assert row["units_per_hour"] == 5000.0 * 3600
    assert row["benchmark_run_ids"] == ["sglang-run", "silent-run", "vllm-run"]


def test_shape_within_tolerance_of_the_declared_lengths():
    runs = [run("close", mean_input_tokens=1050.0, mean_output_tokens=195.0, output_tokens_per_s=1000.0),
            run("edge", mean_input_tokens=1100.0, mean_output_tokens=180.0, output_tokens_per_s=3000.0),
            run("long-prompts", mean_input_tokens=1200.0, mean_output_tokens=200.0, output_tokens_per_s=8000.0),
            run("configured", input_len_tokens=1000, output_len_tokens=200, output_tokens_per_s=2000.0),
            run("unstated", output_tokens_per_s=9000.0)]
    con = build(workloads=[chat(input_tokens=1000, output_tokens=200, shape_tolerance_pct=10.0)],
                offers=[offer("o")], bench_runs=runs)
    found = matches(con)
    assert {k: v["match_status"] for k, v in found.items()} == {
        "close": "matched", "edge": "matched", "long-prompts": "mismatched", "configured": "matched",
        "unstated": "mismatched"}
    assert found["long-prompts"]["mismatch_detail"] == "mean input 1200.0 tokens, not within ±10.0% of 1000"
    assert "mean output not stated tokens" in found["unstated"]["mismatch_detail"]
    [row] = costs(con).values()
    assert row["units_per_hour"] == 2000.0 * 3600  # median of 1000, 2000, 3000


@settings(max_examples=30, deadline=None, derandomize=True)
@given(declared=st.integers(1, 100_000), tolerance=st.integers(0, 100), run_mean=st.integers(0, 200_000))
def test_shape_rule_property(declared, tolerance, run_mean):
    con = build(workloads=[chat(input_tokens=declared, shape_tolerance_pct=float(tolerance))], offers=[],
                bench_runs=[run("r", mean_input_tokens=float(run_mean))])
    [found] = matches(con).values()
    assert found["input_matches"] == (abs(run_mean - declared) * 100 <= declared * tolerance)


def test_slo_compliant_runs_only_and_missing_latency_is_not_compliant():
    slo = json.dumps({"ttft_p99_ms": 2000.0, "tpot_mean_ms": 50.0})
    runs = [run("fast", ttft_p99_ms=1500.0, tpot_mean_ms=40.0, output_tokens_per_s=1000.0),
            run("slow", ttft_p99_ms=2500.0, tpot_mean_ms=40.0, output_tokens_per_s=4000.0),
            run("no-tpot", ttft_p99_ms=100.0, output_tokens_per_s=6000.0),
            run("mi325x-slow", gpu_model="MI325X", ttft_p99_ms=2100.0, tpot_mean_ms=60.0, output_tokens_per_s=9000.0)]
    con = build(workloads=[chat(slo_json=slo)], offers=[offer("mi300x"), offer("mi325x", "MI325X", "2.5")],
                bench_runs=runs)
    found = matches(con)
    assert {k: v["match_status"] for k, v in found.items()} == {
        "fast": "matched", "slow": "slo_not_met", "no-tpot": "slo_not_met", "mi325x-slow": "slo_not_met"}
    assert found["slow"]["mismatch_detail"] == "ttft_p99_ms 2500.0 ms > SLO 2000.0 ms"
    assert found["no-tpot"]["mismatch_detail"] == "tpot_mean_ms not reported (SLO ≤ 50.0 ms)"
    by_offer = costs(con)
    assert by_offer["mi300x"]["benchmark_run_ids"] == ["fast"] and by_offer["mi300x"]["status"] == "ranked"
    # MI325X's only run is fast enough in tokens but breaks both SLOs: SLO_NOT_MET, not NO_BENCHMARK.
    assert by_offer["mi325x"]["exclusion_reasons"] == ["SLO_NOT_MET"]
    assert "tpot_mean_ms 60.0 ms > SLO 50.0 ms" in by_offer["mi325x"]["benchmark_match_detail"]
    # ... and no estimate from the MI300X run papers over a measured miss.
    assert rows(con, "select count(*) as n from workload_costs where throughput_source = 'estimate'") == [{"n": 0}]


def test_mismatched_runs_give_no_benchmark_with_what_was_close():
    con = build(workloads=[chat(engine="vllm", slo_json=json.dumps({"ttft_p99_ms": 10.0}))], offers=[offer("o")],
                bench_runs=[run("sg", engine="sglang", ttft_p99_ms=50.0)])
    [row] = costs(con).values()
    assert row["exclusion_reasons"] == ["NO_BENCHMARK"]
    assert row["benchmark_match_detail"] == "sg: engine sglang ≠ vllm; ttft_p99_ms 50.0 ms > SLO 10.0 ms"


def test_a_run_declaring_the_workload_vouches_for_what_it_does_not_state():
    con = build(workloads=[chat(engine="vllm", input_tokens=1000)], offers=[offer("o")],
                bench_runs=[run("declared", workload_id="chat", model_id=None, precision=None)])
    assert matches(con)["declared"]["match_status"] == "matched"
    [row] = costs(con).values()
    assert row["status"] == "ranked"


def test_multi_node_runs_must_state_the_same_node_count_when_they_state_one():
    memory = [{"workload_id": "chat", "gpu_model": "MI300X", "gpu_count": 8, "fits": False,
               "precision_supported": True, "min_gpus": 16}]
    base = dict(workloads=[chat()], offers=[offer("node8", price="16", gpus_per_node=8)], memory=memory)
    one_box = costs(build(**base, bench_runs=[run("one-box", gpu_count=16, node_count=1)]))["node8"]
    assert (one_box["node_count"], one_box["exclusion_reasons"]) == (2, ["NO_BENCHMARK"])
    two = costs(build(**base, bench_runs=[run("two-nodes", gpu_count=16, node_count=2),
                                          run("one-box", gpu_count=16, node_count=1, output_tokens_per_s=1.0)]))["node8"]
    assert (two["status"], two["benchmark_run_ids"], two["benchmark_node_count"]) == ("ranked", ["two-nodes"], 2)
    assert "MULTI_NODE: 2 nodes; throughput from runs on 2 nodes, 16 GPUs in total" in two["risk_notes"]
    unstated = costs(build(**base, bench_runs=[run("unstated", gpu_count=16)]))["node8"]
    assert unstated["status"] == "ranked"
    assert any("do not state their node count" in n for n in unstated["risk_notes"])


def _workloads(tmp_path, body: str):
    path = tmp_path / "workloads.yaml"
    path.write_text("workloads:\n  - id: a\n    kind: inference\n    unit: requests\n    quantity: 1\n" + body)
    return load_workloads(path)


def test_workloads_yaml_shape_and_slo_are_validated(tmp_path):
    frame = _workloads(tmp_path, "    input_tokens: 1000\n    output_tokens: 200\n"
                                 "    match: {shape_tolerance_pct: 5}\n    slo: {ttft_p99_ms: 2000, tpot_mean_ms: 50}\n")
    row = frame.row(0, named=True)
    assert (row["input_tokens"], row["output_tokens"], row["shape_tolerance_pct"]) == (1000, 200, 5.0)
    assert json.loads(row["slo_json"]) == {"ttft_p99_ms": 2000.0, "tpot_mean_ms": 50.0}
    assert _workloads(tmp_path, "").row(0, named=True)["shape_tolerance_pct"] == 10.0
    for bad, message in [("    slo: {ttft_p42_ms: 1}\n", "unknown SLO 'ttft_p42_ms'"),
                         ("    slo: {ttft_p99_ms: -1}\n", "slo.ttft_p99_ms"),
                         ("    slo: {ttft_p99_ms: .inf}\n", "slo.ttft_p99_ms"),
                         ("    match: {shape_tolerance_pct: 150}\n", "shape_tolerance_pct"),
                         ("    input_tokens: many\n", "input_tokens")]:
        with pytest.raises(ConfigError, match=message):
            _workloads(tmp_path, bad)


def test_check_blocks_a_ranking_that_cites_a_run_that_does_not_match():
    check = sql_compiled.compiled_checks(SQL_DIR)["assert_ranked_runs_match_the_workload"]
    con = build(workloads=[chat(slo_json=json.dumps({"ttft_p99_ms": 2000.0}))], offers=[offer("o")],
                bench_runs=[run("fast", ttft_p99_ms=1500.0), run("slow", ttft_p99_ms=2500.0)])
    assert con.execute(check).fetchall() == []
    con.execute("update rankings set benchmark_run_ids = ['fast', 'slow']")
    assert con.execute(check).fetchall() == [("chat", "o", "slow")]
    # Each ranking is named with each offending run it cites, as often as it cites it.
    con.execute("update rankings set benchmark_run_ids = ['slow', 'fast', 'slow']")
    assert con.execute(check).fetchall() == [("chat", "o", "slow")] * 2


def test_check_names_every_ranking_that_cites_an_offending_list():
    check = sql_compiled.compiled_checks(SQL_DIR)["assert_ranked_runs_match_the_workload"]
    con = build(workloads=[chat(slo_json=json.dumps({"ttft_p99_ms": 2000.0}))], offers=[offer("o"), offer("p")],
                bench_runs=[run("fast", ttft_p99_ms=1500.0), run("slow", ttft_p99_ms=2500.0)])
    assert sorted(con.execute("select offer_id, benchmark_run_ids from rankings").fetchall()) == [
        ("o", ["fast"]), ("p", ["fast"])]
    assert con.execute(check).fetchall() == []
    con.execute("update rankings set benchmark_run_ids = ['fast', 'slow']")  # both offers cite one list
    assert sorted(con.execute(check).fetchall()) == [("chat", "o", "slow"), ("chat", "p", "slow")]
    con.execute("update rankings set benchmark_run_ids = ['slow'] where offer_id = 'p'")
    assert sorted(con.execute(check).fetchall()) == [("chat", "o", "slow"), ("chat", "p", "slow")]


def test_check_blocks_a_ranking_without_evidence_or_with_a_stale_cost():
    check = sql_compiled.compiled_checks(SQL_DIR)["assert_rankings_have_evidence"]
    con = build(workloads=[chat()], offers=[offer("o")], bench_runs=[run("fast")])
    assert con.execute(check).fetchall() == []
    con.execute("update workload_costs set is_stale = true")
    assert [r[:2] for r in con.execute(check).fetchall()] == [("chat", "o")]
    con.execute("update workload_costs set is_stale = false")
    for no_evidence in ("[]", "null"):
        con.execute(f"update rankings set benchmark_run_ids = {no_evidence}")
        assert [r[:2] for r in con.execute(check).fetchall()] == [("chat", "o")]


@settings(max_examples=30, deadline=None, derandomize=True)
@given(ceiling=st.floats(0.5, 10_000, allow_nan=False), latency=st.none() | st.floats(0, 20_000, allow_nan=False),
       engine=st.sampled_from([None, "vllm", "sglang"]))
def test_slo_and_engine_rule_property(ceiling, latency, engine):
    """A run counts only when it reports the latency and it is within the SLO, and its engine is the workload's."""
    con = build(workloads=[chat(engine="vllm", slo_json=json.dumps({"tpot_p99_ms": ceiling}))], offers=[],
                bench_runs=[run("r", tpot_p99_ms=latency, engine=engine)])
    [found] = matches(con).values()
    slo_met = latency is not None and latency <= ceiling
    assert found["slo_met"] == slo_met and found["engine_matches"] == (engine == "vllm")
    expected = "matched" if slo_met and engine == "vllm" else ("slo_not_met" if engine == "vllm" else "mismatched")
    assert found["match_status"] == expected

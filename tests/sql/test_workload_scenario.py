"""A workload states or implies its scenario, and only runs of that scenario count (issue 16).

The model int_workload_benchmark_matches runs on small tables shaped like its inputs, built from the
real MLPerf v4.1 AMD 8 × MI300X Llama2-70B results (Offline 23,514.8 tokens/s, Server 21,028.23
tokens/s with TTFT p99 / TPOT p99 from the summaries: data/samples/benchmarks/SOURCES.md)."""
import pytest

from flows.ingest.workloads import load_workloads
from provider_eval.errors import ConfigError
from tests.sql_chain import chain

OFFLINE, SERVER = 23514.8, 21028.23


def _matches(workloads: list[tuple]) -> dict:
    """(workload_id, run scenario) → (match_status, mismatch_detail) for the two real runs."""
    con = chain({
        "stg_workloads": [dict(workload_id=w, kind=kind, scenario=scenario, slo_json=slo, benchmark_workload_id=w,
                               unit="output_tokens", model_id="llama-2-70b", precision="fp8", shape_tolerance_pct=10.0)
                          for w, kind, scenario, slo in workloads],
        "stg_benchmark_runs": [dict(run_id="offline", scenario="Offline"),
                               dict(run_id="server", scenario="Server", ttft_p99_ms=1999.0, tpot_p99_ms=150.0)],
        "int_benchmark_throughputs": [dict(run_id=r, gpu_model="MI300X", gpu_count=8, unit="output_tokens",
                                           units_per_hour=tps * 3600, engine="vllm", model_id="llama-2-70b", precision="fp8")
                                      for r, tps in (("offline", OFFLINE), ("server", SERVER))],
        "int_benchmark_plausibility": [],  # both runs are the published results themselves
    }, targets=["int_workload_benchmark_matches"])
    rows = con.execute("select workload_id, run_id, match_status, mismatch_detail from int_workload_benchmark_matches").fetchall()
    return {(w, r): (status, detail) for w, r, status, detail in rows}


def test_an_offline_workload_counts_only_the_offline_run():
    got = _matches([("batch", "inference", None, None)])
    assert got[("batch", "offline")] == ("matched", None)
    status, detail = got[("batch", "server")]
    assert status == "mismatched"
    assert detail == "scenario server ≠ offline (workload scenario implied: inference without SLOs)"


def test_slos_imply_server_and_a_stated_scenario_wins():
    got = _matches([("slo", "inference", None, '{"ttft_p99_ms": 2000, "tpot_p99_ms": 200}'),
                    ("stated-server", "inference", "server", None),
                    ("stated-interactive", "inference", "interactive", None),
                    ("job", "batch_job", None, None)])
    assert got[("slo", "server")] == ("matched", None)
    assert got[("slo", "offline")][0] == "mismatched"
    assert "implied by its SLOs" in got[("slo", "offline")][1]
    assert got[("stated-server", "server")] == ("matched", None)
    assert got[("stated-server", "offline")][1] == "scenario offline ≠ server (workload scenario stated)"
    # Interactive is the Server scenario under tighter bounds: the SLOs, not the name, decide.
    assert got[("stated-interactive", "server")] == ("matched", None)
    assert got[("stated-interactive", "offline")][0] == "mismatched"
    # Batch jobs and training have no serving scenario: every run of the model counts.
    assert got[("job", "offline")] == got[("job", "server")] == ("matched", None)


def test_the_bundled_offline_workload_uses_the_offline_run_only(sample_warehouse):
    from tests.conftest import query

    rows = query(sample_warehouse, """
        select distinct units_per_hour / 3600, benchmark_run_ids from workload_costs
        where workload_id = 'llama2-70b-fp8-offline-tokens' and status = 'ranked' and gpu_model = 'MI300X'""")
    assert len(rows) == 1
    tokens_per_s, run_ids = rows[0]
    assert tokens_per_s == pytest.approx(OFFLINE)  # was the median with the Server run: 22,271.5
    assert [r.rsplit("/", 1)[1] for r in run_ids] == ["Offline"]
    # NVIDIA's 8 x H200 baseline (issue 22) likewise counts its Offline run only (31,302.7 tok/s).
    h200 = query(sample_warehouse, """select distinct benchmark_run_ids from workload_costs
        where workload_id = 'llama2-70b-fp8-offline-tokens' and status = 'ranked' and gpu_model = 'H200'""")
    assert [[r.rsplit("/", 1)[1] for r in ids] for (ids,) in h200] == [["Offline"]]


def test_an_unknown_scenario_is_a_config_error(tmp_path):
    path = tmp_path / "workloads.yaml"
    path.write_text("workloads:\n  - id: w\n    kind: inference\n    unit: output_tokens\n    quantity: 1\n"
                    "    scenario: batch\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"line 2: scenario 'batch' is not one of \['interactive', 'offline', 'server'\]"):
        load_workloads(path)

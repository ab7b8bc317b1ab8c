"""Every benchmark format through the real refresh flow: tables, units, quarantine, idempotency."""
import json
import shutil

import pytest

from tests.benchmark_files import detailed_vllm_result, write_json
from tests.conftest import FIXTURES, query, run_refresh, write_sources

BENCH = FIXTURES / "benchmarks"


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    """A warehouse refreshed from every benchmark fixture, refreshed twice (the second a replay)."""
    root = tmp_path_factory.mktemp("bench")
    shutil.copytree(BENCH / "mlperf_v4.1", root / "mlperf_v4.1")
    write_json(root / "detailed" / "detailed-3000.json", detailed_vllm_result(3000, 25))
    (root / "detailed" / "cut.json").write_text('{"completed": 10, "duration": 5.0, "ttfts": [0.1,', encoding="utf-8")
    b = str(BENCH)
    sources = write_sources(root, [
        {"name": "vllm", "kind": "benchmarks", "format": "vllm-serve", "path": f"{b}/vllm_serve_*.json",
         "defaults": {"gpu_count": 8}},
        {"name": "vllm-detailed", "kind": "benchmarks", "format": "vllm-serve", "path": "detailed/*.json"},
        {"name": "vllm-log", "kind": "benchmarks", "format": "vllm-serve-log", "path": f"{b}/*.log",
         "defaults": {"gpu_model": "MI325X", "gpu_count": 8}},
        {"name": "vllm-offline", "kind": "benchmarks", "format": "vllm-throughput", "path": f"{b}/vllm_throughput_*.json",
         "defaults": {"gpu_model": "MI300X", "gpu_count": 8}},
        {"name": "sglang", "kind": "benchmarks", "format": "sglang-serving", "path": f"{b}/*.jsonl",
         "defaults": {"gpu_model": "MI355X", "gpu_count": 8}},
        {"name": "mlperf", "kind": "benchmarks", "format": "mlperf-summary",
         "path": "mlperf_v4.1/**/mlperf_log_summary.txt", "defaults": {"model_id": "llama-2-70b", "precision": "fp8"}},
        {"name": "inferencex", "kind": "benchmarks", "format": "inferencex-agg", "path": f"{b}/inferencex_*.json"},
    ])
    warehouse = root / "wh" / "pe.duckdb"
    state = run_refresh(warehouse, sources)
    assert state.is_completed(), state.message
    first = {t: query(warehouse, f"select count(*) from {t}")[0][0]
             for t in ("benchmark_runs", "benchmark_requests", "quarantine", "ingest_manifest")}
    index_lines = (warehouse.parent / "landing" / "index.jsonl").read_text().count("\n")
    # The replay: the original system JSON is gone; the landed companion must still be used.
    (root / "mlperf_v4.1" / "closed" / "AMD" / "systems" / "8xMI300X_2xEPYC-9374F.json").unlink()
    state = run_refresh(warehouse, sources)
    assert state.is_completed(), state.message
    return {"warehouse": warehouse, "first": first, "index_lines": index_lines}


def q(bench, sql, params=None):
    return query(bench["warehouse"], sql, params)


def test_every_format_lands_runs(bench):
    rows = dict(q(bench, "select benchmark_format, count(*) from benchmark_runs group by all"))
    assert rows == {"vllm-serve": 2, "vllm-serve-log": 2, "vllm-throughput": 1, "sglang-serving": 2,
                    "mlperf-summary": 2, "inferencex-agg": 1}  # the GLM-5.1 run: MODEL_UNKNOWN


def test_mlperf_known_answers_with_system_json(bench):
    rows = q(bench, """select scenario, output_tokens_per_s, gpu_model, gpu_count, rocm_version
                       from benchmark_runs where benchmark_format = 'mlperf-summary' order by scenario""")
    assert rows == [("Offline", 23514.8, "MI300X", 8, "6.1.2"), ("Server", 21028.23, "MI300X", 8, "6.1.2")]


def test_manifest_rejects_truncated_and_skips_pytorch_sibling(bench):
    rows = q(bench, "select original_path, status, reason from ingest_manifest where source_name like 'vllm%'")
    by_name = {p.rsplit("/", 1)[-1]: (s, r) for p, s, r in rows}
    assert by_name["cut.json"][0] == "rejected" and by_name["cut.json"][1].startswith("TRUNCATED")
    assert not any(name.endswith(".pytorch.json") for name in by_name)
    assert by_name["vllm_serve_current_mi300x.json"] == ("loaded", None)


def test_quarantine_names_each_bad_run(bench):
    rows = q(bench, "select source_name, row_number, reason_code from quarantine order by all")
    assert ("sglang", 2, "JSON_MALFORMED") in rows
    assert ("vllm-log", 70, "TRUNCATED") in rows
    assert ("inferencex", 2, "GPU_ALIAS_UNKNOWN") in rows
    assert any(r[0] == "inferencex" and r[2] == "MODEL_UNKNOWN" for r in rows)  # amd/GLM-5.1-MXFP4
    assert ("vllm", 1, "FIELD_MISSING") in rows  # the A100 file names no GPU


def test_per_request_detail_links_to_its_run(bench):
    rows = q(bench, """select r.run_id, r.request_rows, count(*), count(*) filter (where not q.succeeded),
                              sum(q.output_tokens), r.output_tokens_total
                       from benchmark_requests q join benchmark_runs r using (run_id, file_sha256)
                       group by all""")
    assert len(rows) == 1
    _, request_rows, n, failed, out_sum, out_total = rows[0]
    assert request_rows == n == 3000 and failed == 25 and out_sum == out_total


def test_per_gpu_output_throughput_is_comparable_across_formats(bench):
    rows = q(bench, """select benchmark_format, output_tokens_per_s_per_gpu from benchmark_runs
                       where output_tokens_per_s = 12000""")
    assert {f for f, _ in rows} == {"vllm-serve", "vllm-serve-log", "inferencex-agg"}
    assert all(v == pytest.approx(1500.0) for _, v in rows)


def test_units_are_canonical(bench):
    # InferenceX seconds and MLPerf nanoseconds both arrive in ms.
    (ttft,) = q(bench, "select ttft_median_ms from benchmark_runs where benchmark_format = 'inferencex-agg'")[0]
    assert ttft == pytest.approx(150.5)
    (tpot,) = q(bench, "select tpot_p99_ms from benchmark_runs where scenario = 'Server'")[0]
    assert tpot == pytest.approx(197.873909)


def test_reingest_and_replay_change_nothing(bench):
    again = {t: q(bench, f"select count(*) from {t}")[0][0] for t in bench["first"]}
    assert again == bench["first"]
    index = (bench["warehouse"].parent / "landing" / "index.jsonl").read_text()
    assert index.count("\n") == bench["index_lines"]
    mlperf = [json.loads(line) for line in index.splitlines() if json.loads(line)["source_name"] == "mlperf"]
    assert all(len(m["companions"]) == 1 for m in mlperf)


def test_bundled_samples_include_mi300x_and_mi325x_runs(sample_warehouse):
    models = {g for (g,) in query(sample_warehouse,
                                  "select distinct gpu_model from benchmark_runs where benchmark_format != 'run-csv'")}
    assert {"MI300X", "MI325X"} <= models

"""A tiny run of the benchmark (`make bench SCALE=tiny`): it completes and writes the documented JSON."""
import json
import subprocess
import sys
from pathlib import Path

import polars as pl

from bench.synthetic import SCALES, amd_aliases, generate
from provider_eval.sql_compiled import compiled_models
from provider_eval.sql_layer import BUILD_THREADS

ROOT = Path(__file__).resolve().parent.parent.parent
STAGES = {"land", "parse", "validate", "load", "sql_models", "quality_gate", "publish"}


def test_synthetic_inputs_use_only_known_gpu_names(tmp_path):
    """Every generated GPU name is an AMD alias from data/reference/gpu_aliases.csv; counts add up."""
    gen = generate(tmp_path, SCALES["tiny"])
    quotes = pl.concat([pl.read_csv(p, infer_schema_length=0) for p in gen["quote_files"]])
    assert quotes.height == gen["rows_offers"] == SCALES["tiny"].observations
    assert set(quotes["gpu_model"]) <= set(amd_aliases())
    assert quotes["offer_id"].n_unique() == SCALES["tiny"].offers
    # One scrape per file: an offer appears once in each file.
    for p in gen["quote_files"]:
        assert pl.read_csv(p, infer_schema_length=0)["offer_id"].is_duplicated().sum() == 0
    assert pl.read_csv(gen["run_files"][0]).height == gen["rows_runs"]
    # --save-detailed result files: per-request lists of one length, adding up to the scale's requests.
    docs = [json.loads(Path(p).read_text()) for p in gen["request_files"]]
    assert sum(d["num_prompts"] for d in docs) == gen["rows_requests"] == SCALES["tiny"].requests
    for d in docs:
        assert {len(d[k]) for k in ("input_lens", "output_lens", "ttfts", "latencies", "errors")} == {d["num_prompts"]}
        assert d["completed"] + d["failed"] == d["num_prompts"]
        assert all(lat >= ttft for lat, ttft in zip(d["latencies"], d["ttfts"]))


def test_bench_tiny_writes_result_json(tmp_path):
    out = tmp_path / "latest.json"
    done = subprocess.run([sys.executable, "-m", "bench.run", "--scale", "tiny", "--out", str(out), "--repeats", "2",
                           "--work", str(tmp_path / "work")], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(out.read_text())
    assert result["scale"] == "tiny"
    assert result["rows_offers"] == SCALES["tiny"].observations
    assert result["rows_requests"] == SCALES["tiny"].requests
    c = result["row_conservation"]
    assert c["benchmark_requests_rows"] == c["requests_generated"] - c["requests_of_quarantined_runs"]
    assert result["requests"]["files"] == result["request_files"] > 0
    assert result["incremental_refresh_seconds"] > 0 and "one new quote-csv" in result["incremental_refresh_note"]
    # The first incremental refresh started from a copy of the published warehouse (no publish had
    # replaced a file yet); the next one from the file that publish replaced, copying nothing. The full
    # rebuild of the same inputs is their anchor.
    assert result["first_incremental_started_from"] == "copy" and result["first_incremental_copy_seconds"] > 0
    assert result["incremental_started_from"] == "previous" and result["incremental_copy_seconds"] == 0
    # (Moving the file in is a rename: its seconds may round to 0.)
    assert result["incremental_take_previous_seconds"] >= 0 and result["full_rebuild_seconds"] > 0
    assert result["incremental_ratio_vs_full"] > 0 and result["incremental_ratio_vs_first_refresh"] > 0
    # A quotes-only scrape runs the quote and cost chain, not the models only benchmark runs reach.
    incremental = set(result["incremental_sql_model_seconds"])
    assert {"stg_quote_observations", "int_quote_latest", "offer_history", "int_workload_costs"} <= incremental
    assert not incremental & {"stg_benchmark_runs", "benchmark_runs", "benchmark_requests", "int_benchmark_throughputs"}
    assert result["incremental_models_kept"] == len(result["sql_model_seconds"]) - len(incremental) > 0
    assert result["incremental_vs_full_differences"] == {}
    # Tiny inputs fit the build's memory: no model ran out of it in any refresh (the bench would name it).
    assert result["memory_rerun_seconds"] == {}
    # The slowest data tests, each a test the project declares, slowest first.
    for key in ("slowest_check_seconds", "incremental_slowest_check_seconds", "version_slowest_check_seconds"):
        checks = result[key]
        assert 0 < len(checks) <= 5 and list(checks.values()) == sorted(checks.values(), reverse=True), key
    assert result["memory_reruns_seconds"] == {
        when: {} for when in ("first_incremental", "incremental", "version", "unchanged", "full_rebuild")}
    # The same scrape file rewritten (a new version of its path): the quote chain again, and the
    # comparison above covers it (the full rebuild reads the same landed versions).
    assert result["version_refresh_seconds"] > 0 and result["version_ratio_vs_full"] > 0
    assert {"int_quote_latest", "offer_history"} <= set(result["version_sql_model_seconds"])
    # Nothing new: the clock and the reads flag nothing (no age limit, every offer listed), so only the
    # file-version models run. A UTC midnight between the two refreshes moves every quote's age by a
    # day (CI once ran across one): the cost models then run too, and the bench says so.
    assert result["unchanged_refresh_seconds"] > 0
    if result["unchanged_refresh_crossed_utc_day"]:
        assert result["unchanged_models_run"] > 4, result["unchanged_stages_seconds"]
    else:
        assert result["unchanged_models_run"] == 4, result["unchanged_stages_seconds"]
    for key in ("ingest_ratio_vs_duckdb", "peak_rss_bytes", "rank_query_p50_ms", "rank_export_query_p50_ms", "cli_rank_p50_ms",
                "checks_seconds", "feasibility_seconds", "duckdb_baseline_seconds"):
        assert isinstance(result[key], (int, float)) and result[key] > 0, key
    assert set(result["duckdb_baseline_seconds_by_table"]) == {"quotes", "runs", "requests", "cpu_seconds"}
    assert result["ingest_cpu_ratio_vs_duckdb"] > 0 and result["pipeline_ingest_cpu_seconds"] > 0
    # The second anchor: generated files share one header, so DuckDB reads them by position.
    plain = result["duckdb_plain_baseline_seconds_by_table"]
    assert plain["read_csv_modes"] == {"quotes": "plain", "runs": "plain"}
    assert {"quotes", "runs", "requests", "cpu_seconds"} <= set(plain)
    assert result["ingest_ratio_vs_duckdb_plain"] > 0 and result["ingest_cpu_ratio_vs_duckdb_plain"] > 0
    assert set(result["stages"]) == STAGES
    # The floor (bench/floor.py): its four parts, each measured, and their sum.
    floor = result["ingest_floor"]
    parts = ("keep_bytes", "read_cells", "contracts", "write_tables")
    assert set(floor) == {"seconds", "cpu_seconds", *parts}
    # (CPU seconds tick in hundredths: hashing 15 tiny files may take none.)
    assert all(floor[p]["seconds"] > 0 and floor[p]["cpu_seconds"] >= 0 for p in parts), floor
    assert abs(floor["seconds"] - sum(floor[p]["seconds"] for p in parts)) < 0.01
    # Every generated input file was hashed and copied once.
    assert floor["keep_bytes"]["files"] == result["quote_files"] + 1 + result["request_files"]  # one run file
    # Every staged accepted row was checked: runs and quotes accepted, and the requests of accepted runs.
    assert floor["contracts"]["rows"] == c["rows_accepted"] + c["benchmark_requests_rows"]
    assert result["ingest_floor_ratio_vs_duckdb_plain"] > 0 and result["ingest_floor_cpu_ratio_vs_duckdb_plain"] > 0
    # Every SQL model dbt materialises (an ephemeral one lives inside its reader) timed once, slowest
    # first. dbt runs BUILD_THREADS models at once, so each model fits inside the stage's wall time and
    # all of them together inside BUILD_THREADS times it (CI once saw the plain sum 1 % over the wall).
    models = result["sql_model_seconds"]
    assert set(models) == {name for name, m in compiled_models(ROOT / "sql").items() if not m.ephemeral}
    assert list(models.values()) == sorted(models.values(), reverse=True)
    wall_s = result["stages"]["sql_models"]["seconds"]
    assert 0 < max(models.values()) <= wall_s
    assert sum(models.values()) <= BUILD_THREADS * wall_s
    for name, stage in result["stages"].items():
        assert {"seconds", "thread_busy_seconds", "rows_per_s", "peak_rss_bytes"} <= set(stage)
        # Every stage was timed: the refresh announced its spans (provider_eval.progress) and the clock heard them.
        assert stage["seconds"] > 0, name
    c = result["row_conservation"]
    assert c["conserved"] and c["rows_in"] == c["rows_accepted"] + c["rows_quarantined"] == c["rows_generated"]
    assert c["rows_quarantined"] >= c["bad_rows_injected"]
    assert result["rankings_rows"] > 0
    summary = done.stdout.strip().splitlines()
    assert any(line.startswith("bench tiny:") and "plain DuckDB read_csv" in line and "floor" in line for line in summary)
    assert "SQL models built again alone after running out of memory side by side: none" in summary
    assert any(line.startswith("slowest data tests of the incremental refresh") and not line.endswith("none") for line in summary)
    assert not (tmp_path / "work").exists()  # scratch inputs removed unless --keep


def test_shared_header_reads_every_header(tmp_path):
    """The plain read_csv anchor is used only when every file's header line is the same."""
    from bench.baselines import shared_header

    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    a.write_text("x,y\n1,2\n")
    b.write_text("x,y\n3,4\n")
    c.write_text("y,x\n5,6\n")  # same columns, other order: positional reading would swap them
    assert shared_header([str(a), str(b)])
    assert not shared_header([str(a), str(b), str(c)])


def test_row_conservation_expects_no_requests_of_a_quarantined_run():
    """A run the contract quarantines takes its requests with it (docs/quarantine.md): the check
    expects the other runs' requests, and exactly those."""
    from bench.run import row_conservation

    gen = {"bad_quote_rows": 1, "rows_requests": 2_500, "requests_per_file": {"vllm-serve-00000.json": 1_000,
           "vllm-serve-00001.json": 1_000, "vllm-serve-00002.json": 500}}
    counts = {"manifest": (10, 9, 1), "quarantine": 1, "quarantined_run_files": ["requests/vllm-serve-00002.json"],
              "benchmark_requests": 2_000}
    c = row_conservation(gen, 10, counts, 10)
    assert c["conserved"] and c["requests_of_quarantined_runs"] == 500 and c["quarantined_run_files"] == 1
    assert not row_conservation(gen, 10, dict(counts, benchmark_requests=2_500), 10)["conserved"]
    assert not row_conservation(gen, 10, dict(counts, quarantined_run_files=[]), 10)["conserved"]


def _warehouse(path: Path, offers_sql: str) -> str:
    """A warehouse file whose public `offers` holds the given rows (refreshed_at: a clock column)."""
    import duckdb

    with duckdb.connect(str(path)) as con:
        con.execute(f"create table offers as select * from ({offers_sql}) t(offer_id, price_usd, refreshed_at)")
    return str(path)


def test_compare_counts_what_except_all_counts_both_ways(tmp_path):
    """The grouped difference finds every extra copy of a row, on either side, NULLs equal to NULLs,
    as `EXCEPT ALL` both ways does; clock columns are left out; a missing table is flagged."""
    import duckdb

    from bench.compare_warehouses import compare

    old = _warehouse(tmp_path / "old.duckdb", "values ('a', 1.5, 1), ('a', 1.5, 2), ('b', null, 3), ('c', 2.0, 4), "
                                              "(null, null, 5)")
    new = _warehouse(tmp_path / "new.duckdb", "values ('a', 1.5, 9), ('b', null, 9), ('b', null, 9), ('d', 2.0, 9), "
                                              "(null, null, 9)")
    # old has one more ('a', 1.5) and ('c', 2.0); new one more ('b', null) and ('d', 2.0).
    assert compare(old, new, tables=("offers",)) == {"offers": (2, 2)}
    with duckdb.connect() as con:
        con.execute(f"attach '{old}' as o (read_only)")
        con.execute(f"attach '{new}' as n (read_only)")
        a, b = "select offer_id, price_usd from o.offers", "select offer_id, price_usd from n.offers"
        except_all = tuple(con.execute(f"select count(*) from ({x} except all {y})").fetchone()[0]
                           for x, y in ((a, b), (b, a)))
    assert except_all == (2, 2)
    assert compare(old, old, tables=("offers",)) == {"offers": (0, 0)}
    assert compare(old, new, tables=("offers", "rankings")) == {"offers": (2, 2), "rankings": (-1, -1)}

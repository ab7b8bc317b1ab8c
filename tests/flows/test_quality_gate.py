"""The great-expectations gate: passes on the bundled data, blocks a broken mart before publish."""
import datetime as dt
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from flows.quality.gate import validate
from provider_eval.paths import SQL_DIR
from tests.conftest import query, run_refresh


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cli_refresh(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """`provider-eval refresh` of the bundled data, run as a user would (the gate runs inside)."""
    warehouse = tmp_path_factory.mktemp("gate") / "provider_eval.duckdb"
    done = subprocess.run([sys.executable, "-m", "provider_eval", "refresh", "--warehouse", str(warehouse)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return warehouse, done


@pytest.fixture(scope="module")
def published(cli_refresh) -> Path:
    """A warehouse refreshed from the bundled data (the gate ran and passed)."""
    return cli_refresh[0]


def test_successful_refresh_prints_no_noise(cli_refresh):
    _, done = cli_refresh
    output = done.stdout + done.stderr
    for noise in ("Traceback", "ERROR", "error:", "Exception", "Calculating Metrics", "great_expectations"):
        assert noise not in output, output
    assert "published" in done.stderr


def _broken_sql(tmp_path: Path) -> Path:
    """A copy of sql/ whose ranks (the rows of the rankings view) report a negative cost, with the SQL
    cost check removed so that only the great-expectations gate stands between it and publication."""
    sql_dir = tmp_path / "sql"
    shutil.copytree(SQL_DIR, sql_dir)
    (sql_dir / "tests" / "assert_ranked_costs_finite_positive.sql").unlink()
    ranks = sql_dir / "models" / "intermediate" / "int_workload_ranks.sql"
    text = ranks.read_text()
    listed = "        cost_per_unit_usd, total_cost_usd, hours_billed, hours_needed,"
    assert text.count(listed) == 1
    ranks.write_text(text.replace(listed, listed.replace("cost_per_unit_usd,", "-cost_per_unit_usd as cost_per_unit_usd,")))
    return sql_dir


def test_gate_passes_on_bundled_data_and_builds_data_docs(published):
    docs = published.parent / "data_docs"
    assert (docs / "index.html").is_file()
    suites = {p.name for p in (docs / "validations").iterdir()}
    assert {"rankings", "estimate_rankings", "ranking_sensitivity", "offers", "offer_history",
            "stg_quote_observations_row_count", "benchmark_runs_row_count", "quarantine_row_count"} <= suites
    assert query(published, "select count(*) from rankings")[0][0] > 0


def test_gate_blocks_a_broken_mart_and_keeps_the_old_warehouse(published, tmp_path):
    before = _digest(published)
    state = run_refresh(published, sql_dir=_broken_sql(tmp_path))
    assert state.is_failed()
    message = state.message
    assert "quality gate failed" in message
    assert "rankings: expect_column_values_to_be_between on rankings.cost_per_unit_usd failed" in message
    n_ranked = query(published, "select count(*) from rankings")[0][0]
    assert f"{n_ranked} of {n_ranked} row(s)" in message
    assert "Data Docs:" in message
    # Nothing was published: same bytes, still positive costs.
    assert _digest(published) == before
    assert query(published, "select min(cost_per_unit_usd) from rankings")[0][0] > 0
    # The Data Docs show the failed run.
    pages = list((published.parent / "data_docs" / "validations" / "rankings").rglob("*.html"))
    assert any("cost_per_unit_usd" in p.read_text() and "Failed" in p.read_text() for p in pages)


def _tampered_copy(published: Path, tmp_path: Path, sql: str) -> Path:
    copy = tmp_path / "build.duckdb"
    shutil.copy(published, copy)
    with duckdb.connect(str(copy)) as con:
        con.execute(sql)
    return copy


def _failures(build: Path, tmp_path: Path) -> list:
    result = validate(build, tmp_path / "docs")
    assert (tmp_path / "docs" / "index.html").is_file()
    return result.failures


def test_price_outside_the_gpu_models_band_is_reported_not_blocking(published, tmp_path):
    # A per-node price of an 8-GPU MI300X node read as a per-GPU price: 15.92 $/GPU-h. One row:
    # row-level (the SQL excludes it as PRICE_IMPLAUSIBLE), so the gate reports it and passes.
    build = _tampered_copy(published, tmp_path, "update marts.offers set usd_per_gpu_hour = 15.92 "
                           "where offer_id = 'hotaisle-mi300x-1'")
    result = validate(build, tmp_path / "docs")
    assert result.success and result.blocking == []
    assert [(f.table, f.column, f.unexpected_rows) for f in result.warnings] == [("offers", "usd_per_gpu_hour", 1)]
    assert "gpu_model == 'MI300X'" in result.warnings[0].line()
    assert "excluded from ranking as PRICE_IMPLAUSIBLE" in result.warnings[0].line()


def test_many_prices_outside_the_band_are_systemic_and_block(published, tmp_path):
    # Every MI300X price × 100 (a unit or currency bug in a whole source): beyond the row-level limit.
    build = _tampered_copy(published, tmp_path, "update marts.offers set usd_per_gpu_hour = usd_per_gpu_hour * 100 "
                           "where gpu_model = 'MI300X'")
    result = validate(build, tmp_path / "docs")
    assert not result.success
    assert [(f.column, f.blocking) for f in result.failures] == [("usd_per_gpu_hour", True)]
    assert "above the row-level limit (10 % and 3 rows): systemic" in result.blocking[0].line()


def test_model_without_its_own_band_uses_the_fallback(published, tmp_path):
    build = _tampered_copy(published, tmp_path, "update marts.offers set usd_per_gpu_hour = 40 "
                           "where gpu_model = 'MI350X' and quote_status = 'quoted'")
    failures = _failures(build, tmp_path)
    assert [(f.column, f.unexpected_rows, f.blocking) for f in failures] == [("usd_per_gpu_hour", 1, False)]
    assert "gpu_model not in" in failures[0].line()


def test_quote_from_the_future_fails(published, tmp_path):
    future = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=2)).isoformat()
    build = _tampered_copy(published, tmp_path, f"update marts.offer_history set observed_at = '{future}' "
                           "where offer_id = 'hotaisle-mi300x-1'")
    failures = _failures(build, tmp_path)
    assert [(f.table, f.column, f.unexpected_rows, f.blocking) for f in failures] == [
        ("offer_history", "observed_at", 1, False)]


def test_lost_rows_fail_the_row_count(published, tmp_path):
    with duckdb.connect(str(published), read_only=True) as con:
        accepted = con.execute("select count(*) from staging.stg_quote_observations").fetchone()[0]
    build = _tampered_copy(published, tmp_path,
                           "delete from staging.stg_quote_observations where offer_id = 'hotaisle-mi300x-1'")
    failures = _failures(build, tmp_path)
    assert [(f.suite, f.expectation, f.blocking) for f in failures] == [("stg_quote_observations_row_count",
                                                                         "expect_table_row_count_to_equal", True)]
    assert f"expected {accepted}, observed {accepted - 1}" in failures[0].line()


# No id, an empty id, only null and empty ids: none of them is evidence.
@pytest.mark.parametrize("run_ids", ["[]", "['']", "[NULL, '']::varchar[]"])
def test_ranked_row_without_evidence_fails(published, tmp_path, run_ids):
    build = _tampered_copy(published, tmp_path, f"update intermediate.int_workload_ranks set benchmark_run_ids = {run_ids} "
                           "where status = 'ranked' and rank = 1 and workload_id = 'seed-000-same-task'")
    failures = _failures(build, tmp_path)
    assert [(f.column, f.unexpected_rows) for f in failures] == [("has_evidence_run", 1)]


def test_estimates_must_be_labelled_costed_and_based(published, tmp_path):
    build = _tampered_copy(published, tmp_path, """
        update intermediate.int_workload_ranks set throughput_source = 'measured' where status = 'estimated' and rank = 1;
        update intermediate.int_workload_ranks set estimate_basis = null, total_cost_usd = -1
            where status = 'estimated' and rank = 2""")
    failures = _failures(build, tmp_path)
    assert {(f.suite, f.column, f.unexpected_rows) for f in failures} == {
        ("estimate_rankings", "throughput_source", 1), ("estimate_rankings", "estimate_basis", 1),
        ("estimate_rankings", "total_cost_usd", 1)}


def test_sensitivity_must_be_finite_and_within_the_ranking(published, tmp_path):
    n_ranked = query(published, "select count(*) from rankings where workload_id = 'seed-000-same-task'")[0][0]
    build = _tampered_copy(published, tmp_path, f"""
        update intermediate.int_ranking_sensitivity set break_even_usd_per_gpu_hour = -1.5
            where workload_id = 'seed-000-same-task' and rank = 2;
        update intermediate.int_ranking_sensitivity set rank_at_30pct = {n_ranked + 1}
            where workload_id = 'seed-000-same-task' and rank = 3""")
    failures = _failures(build, tmp_path)
    assert {(f.suite, f.column or f.expectation, f.unexpected_rows) for f in failures} == {
        ("ranking_sensitivity", "break_even_usd_per_gpu_hour", 1),
        ("ranking_sensitivity", "expect_column_pair_values_a_to_be_greater_than_b", 1)}


def test_no_estimates_and_no_sensitivity_rows_pass(published, tmp_path):
    """A warehouse where nothing needs estimating (or nothing is ranked) is not a failure."""
    build = _tampered_copy(published, tmp_path,
                           "delete from intermediate.int_workload_ranks where status = 'estimated';"
                           " delete from intermediate.int_ranking_sensitivity")
    assert _failures(build, tmp_path) == []


def test_one_vendors_impossible_price_publishes_with_that_row_excluded(published, tmp_path):
    """The issue's case: a single 149 $/GPU-h row (YAML read `2:29` as 149) among every bundled source."""
    import yaml

    from provider_eval.paths import DATA_DIR

    doc = yaml.safe_load((DATA_DIR / "sources.yaml").read_text(encoding="utf-8"))
    for source in doc["sources"]:
        source["path"] = str(DATA_DIR / source["path"])
    quotes = tmp_path / "typo.csv"
    quotes.write_text("provider,offer_id,gpu_model,gpus_per_node,price,currency,price_unit,price_scope,"
                      "billing_model,observed_at\n"
                      "typo-cloud,typo-mi300x-1,MI300X,1,149,USD,hour,per_gpu,on_demand,2026-01-15T00:00:00Z\n")
    doc["sources"].append({"name": "typo-cloud", "kind": "quotes", "format": "quote-csv", "path": str(quotes)})
    sources = tmp_path / "sources.yaml"
    sources.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    warehouse = tmp_path / "w" / "provider_eval.duckdb"
    state = run_refresh(warehouse, sources=sources)
    assert state.is_completed(), state.message
    assert query(warehouse, "select price_band_reason, price_band_detail from offers where offer_id = 'typo-mi300x-1'") == [
        ("PRICE_IMPLAUSIBLE", "149.0 $/GPU-h is outside the plausible MI300X band 0.475 to 12.0 $/GPU-h "
                              "(data/reference/price_bands.csv)")]
    reasons = query(warehouse, "select distinct exclusion_reasons from workload_costs where offer_id = 'typo-mi300x-1'")
    assert reasons and all("PRICE_IMPLAUSIBLE" in r[0] for r in reasons)
    assert query(warehouse, "select count(*) from rankings where offer_id = 'typo-mi300x-1'") == [(0,)]
    # Every other source published as before: the same rankings as the bundled refresh.
    ranked = "select workload_id, rank, offer_id, cost_per_unit_usd from rankings order by all"
    assert query(warehouse, ranked) == query(published, ranked)
    assert query(warehouse, "select count(*) from offers where price_band_reason is not null") == [(1,)]


def test_gate_does_not_fingerprint_its_frames(published, tmp_path, monkeypatch):
    """GX's batch fingerprint hashes every row of a frame (and a counted frame's n index rows): off in the gate,
    whose frames are read fresh each refresh, so its cost does not grow with the quote history."""
    from great_expectations.execution_engine import pandas_execution_engine

    hashed = []
    real = pandas_execution_engine.hash_pandas_dataframe
    monkeypatch.setattr(pandas_execution_engine, "hash_pandas_dataframe", lambda df: hashed.append(len(df)) or real(df))
    monkeypatch.setattr(pandas_execution_engine, "HASH_THRESHOLD", 1e9)  # GX's own default, as imported
    result = validate(published, tmp_path / "docs")
    assert result.success and hashed == []
    # The row counts are still checked on frames of that many rows: a lost row still fails (above).
    assert (tmp_path / "docs" / "index.html").is_file()

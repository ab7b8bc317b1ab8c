"""Incremental refresh runs dbt only on what a changed input reaches (#20): after a quotes-only
scrape the benchmark, validation and workload models keep their tables, and every public table
still equals a full rebuild; a changed workloads file or run file rebuilds what reads it."""
import shutil

import duckdb
import pytest

from bench.compare_warehouses import compare
from flows.input_changes import changed_inputs, content_hashes
from provider_eval import progress, sql_layer
from provider_eval.paths import DATA_DIR, DEFAULT_WORKLOADS, SQL_DIR
from tests.benchmark_files import detailed_vllm_result, write_json
from tests.conftest import on_one_utc_day, write_sources
from tests.flows.test_incremental_refresh import SECOND, _refresh

SAMPLES = DATA_DIR / "samples"
QUOTES = (SAMPLES / "quotes" / "seed_000_example.csv").read_text(encoding="utf-8")
RUNS = (SAMPLES / "benchmarks" / "seed_000_runs.csv").read_text(encoding="utf-8")
# Reached only through the benchmark runs, the per-request files, the validations or the workloads.
NOT_REACHED_BY_QUOTES = {
    "stg_benchmark_runs", "int_current_benchmark_runs", "int_benchmark_throughputs", "int_benchmark_plausibility",
    "int_workload_benchmark_matches", "int_workload_throughput", "benchmark_runs", "benchmark_requests",
    "stg_workloads", "int_workloads", "stg_hardware_validations", "stg_validation_gpus", "int_validation_facts",
    "int_validation_checks", "int_validation_verdicts", "int_latest_validations", "hardware_validations",
    "validation_checks",
}


def spans_of(name: str, run) -> list:
    """The progress spans called name that run() announced."""
    spans = []
    stop = progress.listen_spans(lambda s: spans.append(s) if s.name == name else None)
    try:
        run()
    finally:
        stop()
    return spans


def _models_built(refresh_once) -> set[str]:
    """The names of the models the SQL build of refresh_once() ran (its sql_models span)."""
    (span,) = spans_of("sql_models", refresh_once)
    return {n.name for n in span.detail["nodes"] if n.resource_type == "model"}


def _equals_full_rebuild(warehouse, sources, workloads) -> dict:
    """Keep the incremental warehouse aside, rebuild the same inputs in full, compare the public tables."""
    incremental = warehouse.with_name("incremental.duckdb")
    shutil.copy(warehouse, incremental)
    _refresh(warehouse, sources, full=True, workloads=workloads)
    return compare(str(incremental), str(warehouse))


@pytest.fixture(scope="module")
def changes(tmp_path_factory):
    """One warehouse refreshed after a quotes-only scrape, a workloads change and a run file change."""
    return on_one_utc_day(lambda: _refresh_after_changes(tmp_path_factory))


def _refresh_after_changes(tmp_path_factory):
    """The fixture's refreshes, in a folder of their own."""
    root = tmp_path_factory.mktemp("selection")
    (root / "quotes").mkdir()
    (root / "quotes" / "a.csv").write_text(QUOTES, encoding="utf-8")
    (root / "runs.csv").write_text(RUNS, encoding="utf-8")
    write_json(root / "detailed" / "run.json", detailed_vllm_result(50, 2))
    sources = write_sources(root, [
        {"name": "quotes", "kind": "quotes", "format": "quote-csv", "path": "quotes/*.csv",
         "defaults": {"currency": "USD"}},
        {"name": "runs", "kind": "benchmarks", "format": "run-csv", "path": "runs.csv"},
        {"name": "vllm", "kind": "benchmarks", "format": "vllm-serve", "path": "detailed/*.json"}])
    workloads = root / "workloads.yaml"
    shutil.copy(DEFAULT_WORKLOADS, workloads)
    warehouse = root / "wh" / "w.duckdb"
    out = {"all": _models_built(lambda: _refresh(warehouse, sources, workloads=workloads))}

    (root / "quotes" / "b.csv").write_text(SECOND, encoding="utf-8")
    out["quotes"] = _models_built(lambda: _refresh(warehouse, sources, workloads=workloads))
    out["quotes_vs_full"] = _equals_full_rebuild(warehouse, sources, workloads)

    text = workloads.read_text(encoding="utf-8")
    assert "    unit: jobs\n    quantity: 1\n" in text
    workloads.write_text(text.replace("    unit: jobs\n    quantity: 1\n", "    unit: jobs\n    quantity: 3\n", 1),
                         encoding="utf-8")
    out["workloads"] = _models_built(lambda: _refresh(warehouse, sources, workloads=workloads))
    (root / "runs.csv").write_text(RUNS.replace(",36000,", ",30000,"), encoding="utf-8")
    out["runs"] = _models_built(lambda: _refresh(warehouse, sources, workloads=workloads))
    out["runs_vs_full"] = _equals_full_rebuild(warehouse, sources, workloads)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        out["runs_duration"] = con.execute("select count(*) from benchmark_runs where duration_s = 30000").fetchall()
    return out


def test_a_quotes_only_scrape_keeps_the_benchmark_validation_and_workload_models(changes):
    assert NOT_REACHED_BY_QUOTES <= changes["all"]
    assert not NOT_REACHED_BY_QUOTES & changes["quotes"], NOT_REACHED_BY_QUOTES & changes["quotes"]
    # What the new quotes reach still runs.
    assert {"stg_quote_observations", "int_quote_latest", "offer_history", "int_offers", "offers",
            "int_workload_costs", "input_files", "ingest_manifest", "quarantine"} <= changes["quotes"]


def test_a_quotes_only_incremental_build_equals_a_full_rebuild(changes):
    differences = changes["quotes_vs_full"]
    assert differences and all(d == (0, 0) for d in differences.values()), differences


def test_a_changed_workloads_file_or_run_file_rebuilds_what_reads_it(changes):
    assert {"stg_workloads", "int_workloads", "int_workload_benchmark_matches", "int_workload_throughput",
            "int_workload_configurations"} <= changes["workloads"]
    # The run file's new version: its runs, the old version's superseded runs, and what reads them.
    assert {"stg_benchmark_runs", "int_current_benchmark_runs", "int_benchmark_throughputs",
            "int_workload_benchmark_matches", "benchmark_runs", "int_workload_throughput"} <= changes["runs"]
    # The validations and per-request rows changed in neither.
    assert not {"stg_hardware_validations", "hardware_validations", "benchmark_requests"} & (
        changes["workloads"] | changes["runs"])
    assert changes["runs_duration"] == [(1,)]
    differences = changes["runs_vs_full"]
    assert differences and all(d == (0, 0) for d in differences.values()), differences


def test_a_small_table_counts_as_changed_by_content_only():
    """Rebuilt with the same rows (in another order) it is unchanged; one value, one duplicate row,
    a new column type: changed. Staged tables count as load_staged says; file_changes never."""
    con = duckdb.connect()
    con.execute("create schema raw; create schema ref")

    def load(rows: str, types: str = "id int, name varchar") -> dict:
        con.execute(f"create or replace table raw.workloads ({types})")
        con.execute(f"insert into raw.workloads values {rows}")
        con.execute("create or replace table raw.file_changes as select 'quotes' as source_name")
        con.execute("create or replace table raw.quote_observations as select 1 as id")
        return content_hashes(con)

    before = load("(1, 'a'), (2, null)")
    assert "raw.quote_observations" not in before  # filled file by file: load_staged tells
    assert changed_inputs(before, load("(2, null), (1, 'a')"), set()) == set()
    assert changed_inputs(before, load("(1, 'a'), (2, 'NULL')"), set()) == {"raw.workloads"}
    assert changed_inputs(before, load("(1, 'a'), (2, null), (2, null)"), set()) == {"raw.workloads"}
    assert changed_inputs(before, load("(1, 'a'), (2, null)", "id bigint, name varchar"), set()) == {"raw.workloads"}
    con.execute("create or replace table raw.file_changes as select 'runs' as source_name")
    assert changed_inputs(before, load("(1, 'a'), (2, null)"), {"quote_observations"}) == {"raw.quote_observations"}


def test_a_file_versions_change_skips_the_models_that_read_only_file_states(tmp_path):
    """raw.file_versions changes every refresh (reads, last seen): what reads the versions runs, what
    filters its own table's rows by file state does not (its staged table brings it in)."""
    sql_layer.write_profile(tmp_path, tmp_path / "warehouse.duckdb", "1GB", None)
    terms = sql_layer.selection(sql_layer.parsed(SQL_DIR, tmp_path, tmp_path / "warehouse.duckdb"),
                                {"raw.file_versions"})
    assert {"stg_file_versions", "int_file_states", "input_files+", "int_quote_latest+"} <= set(terms)
    assert not {"int_current_benchmark_runs+", "benchmark_requests+", "offer_history+",
                "source:raw.file_versions+"} & set(terms)
    assert sql_layer.selection(None, set()) == []  # nothing changed: nothing to build


def test_a_known_file_listed_at_a_new_path_changes_its_state():
    """A withdrawn file's content back at another path counts again: that file's state changed (a new
    file at a new path changes none); a new version of a path changes the state of the one it supersedes."""
    from flows.load import _state_changed_files

    con = duckdb.connect()
    con.execute("create schema raw; create table raw.file_versions (source_name varchar, original_path varchar, "
                "file_sha256 varchar, state varchar, superseded_by varchar)")
    con.execute("insert into raw.file_versions values ('runs', 'a.csv', 'h1', 'withdrawn', null)")
    old = {"source_name": "runs", "original_path": "a.csv", "file_sha256": "h1", "state": "withdrawn",
           "superseded_by": None}
    assert _state_changed_files(con, [old, {**old, "original_path": "b.csv", "file_sha256": "h2",
                                            "state": "current"}]) == set()
    assert _state_changed_files(con, [old, {**old, "original_path": "b.csv", "state": "current"}]) == {("runs", "h1")}
    con.execute("delete from raw.file_versions")
    con.execute("insert into raw.file_versions values ('runs', 'a.csv', 'h1', 'current', null)")
    current = {**old, "state": "current"}
    assert _state_changed_files(con, [{**current, "state": "superseded", "superseded_by": "h2"},
                                      {**current, "file_sha256": "h2"}]) == {("runs", "h1")}

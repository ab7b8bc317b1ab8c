"""Files that change over time (#17): a file corrected in place supersedes its old version, a file
that disappears is withdrawn; history keeps both, the current state uses only what is there now."""

import pytest

from flows.ingest.land import LandedFile
from flows.ingest.versions import Lifecycle, record_reads, version_rows
from provider_eval.paths import DATA_DIR
from tests.conftest import left_as_found, query, run_refresh, write_sources

SAMPLES = DATA_DIR / "samples"
RANKED = ("select gpu_model, total_cost_usd::varchar from rankings "
          "where workload_id = 'seed-000-same-task' and rank is not null order by rank")
SEED_ANSWER = [("MI350X", "16.000000"), ("MI325X", "19.250000"), ("MI300X", "20.000000")]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The seed example's quotes and runs, ingested first with a 10× typo in each, then fixed in place."""
    root = tmp_path_factory.mktemp("lifecycle")
    runs, quotes = root / "runs.csv", root / "quotes.csv"
    good_runs = (SAMPLES / "benchmarks" / "seed_000_runs.csv").read_text(encoding="utf-8")
    good_quotes = (SAMPLES / "quotes" / "seed_000_example.csv").read_text(encoding="utf-8")
    # The typos: the MI300X job took 1 h, not 10 h; the MI325X server costs 2.57 $/h, not 2.75.
    runs.write_text(good_runs.replace("MI300X,1,seed-000-same-task,jobs,1,36000",
                                      "MI300X,1,seed-000-same-task,jobs,1,3600"), encoding="utf-8")
    quotes.write_text(good_quotes.replace(",2.75,", ",2.57,"), encoding="utf-8")
    sources = write_sources(root, [
        {"name": "quotes", "kind": "quotes", "format": "quote-csv", "path": "quotes.csv", "defaults": {"currency": "USD"}},
        {"name": "runs", "kind": "benchmarks", "format": "run-csv", "path": "runs.csv"},
    ])
    warehouse = root / "wh" / "w.duckdb"
    assert run_refresh(warehouse, sources).is_completed()
    typo_ranking = query(warehouse, RANKED)
    runs.write_text(good_runs, encoding="utf-8")
    quotes.write_text(good_quotes, encoding="utf-8")
    assert run_refresh(warehouse, sources).is_completed()
    return {"root": root, "sources": sources, "warehouse": warehouse, "typo_ranking": typo_ranking,
            "runs": runs, "quotes": quotes}


def test_the_typo_ranked_wrong_and_the_fix_in_place_ranks_only_the_fixed_run(world):
    assert world["typo_ranking"][0] == ("MI300X", "2.000000")  # the 10× typo made it cheapest
    assert query(world["warehouse"], RANKED) == SEED_ANSWER
    assert query(world["warehouse"], "select run_id, duration_s from benchmark_runs where gpu_model = 'MI300X'") == [
        ("seed-000-mi300x", 36000.0)]


def test_old_quote_observations_stay_in_history_marked_superseded(world):
    rows = query(world["warehouse"], "select usd_per_gpu_hour::varchar, superseded_by, file_sha256 from offer_history "
                                     "where gpu_model = 'MI325X' order by observed_at")
    assert [r[0] for r in rows] == ["2.570000", "2.750000"]
    (old_price, old_by, _), (_, new_by, new_sha) = rows
    assert old_by == new_sha and new_by is None
    assert query(world["warehouse"], "select usd_per_gpu_hour::varchar from offers where gpu_model = 'MI325X'") == [
        ("2.750000",)]


def test_input_files_show_each_version_and_its_state(world):
    rows = query(world["warehouse"], "select source_name, version, state, rows_in, rows_accepted, rows_quarantined, "
                                     "superseded_by is not null, first_seen_at <= last_seen_at "
                                     "from input_files order by source_name, version")
    assert rows == [("quotes", 1, "superseded", 3, 3, 0, True, True), ("quotes", 2, "current", 3, 3, 0, False, True),
                    ("runs", 1, "superseded", 3, 3, 0, True, True), ("runs", 2, "current", 3, 3, 0, False, True)]


def test_inputs_command_lists_a_sources_files_with_their_state(world):
    import json

    from typer.testing import CliRunner

    from provider_eval.cli import app

    result = CliRunner().invoke(app, ["inputs", "--source", "runs", "-w", str(world["warehouse"]), "-f", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [(r["source_name"], r["version"], r["state"], r["rows_in"]) for r in rows] == [
        ("runs", 1, "superseded", 3), ("runs", 2, "current", 3)]
    assert CliRunner().invoke(app, ["inputs", "--source", "nope", "-w", str(world["warehouse"])]).exit_code != 0


def test_a_file_that_disappears_is_withdrawn_and_comes_back_as_a_new_version(world):
    with left_as_found(world["root"]):  # the module's other tests keep the two-version world
        warehouse, runs = world["warehouse"], world["runs"]
        kept = runs.read_bytes()
        runs.unlink()
        try:
            assert run_refresh(warehouse, world["sources"]).is_completed()
            assert query(warehouse, "select count(*) from benchmark_runs") == [(0,)]
            assert query(warehouse, "select count(*) from rankings where rank is not null") == [(0,)]
            assert query(warehouse, "select state from input_files where source_name = 'runs' order by version") == [
                ("superseded",), ("withdrawn",)]
            assert query(warehouse, "select count(*) from ingest_manifest where source_name = 'runs'") == [(2,)]
        finally:
            runs.write_bytes(kept)
        assert run_refresh(warehouse, world["sources"]).is_completed()
        assert query(warehouse, RANKED) == SEED_ANSWER
        assert query(warehouse, "select version, state from input_files where source_name = 'runs' order by version") == [
            (1, "superseded"), (2, "superseded"), (3, "current")]


def _landed(source, sha, path, at):
    return LandedFile(source, sha, f"/landing/{sha}", path, at)


def test_versions_follow_reads_and_a_failed_read_changes_nothing():
    t = [f"2026-11-0{d}T00:00:00+00:00" for d in range(1, 6)]
    state = record_reads(Lifecycle([], {}), [_landed("s", "a", "p", t[0])], {"s": {"p": "a"}}, t[0])
    state = record_reads(state, [], {"s": {"p": "a"}}, t[1])  # the same content read again
    assert [(r["version"], r["state"], r["reads"]) for r in version_rows(state, {"s"})] == [(1, "current", 2)]
    state = record_reads(state, [], {}, t[2])  # the source could not be read (a failed fetch)
    assert [(r["state"], r["reads"]) for r in version_rows(state, {"s"})] == [("current", 2)]
    state = record_reads(state, [_landed("s", "b", "p", t[3])], {"s": {"p": "b"}}, t[3])
    assert [(r["file_sha256"], r["state"], r["superseded_by"]) for r in version_rows(state, {"s"})] == [
        ("a", "superseded", "b"), ("b", "current", None)]
    state = record_reads(state, [], {"s": {}}, t[4])  # read, and the path is gone
    assert [r["state"] for r in version_rows(state, {"s"})] == ["superseded", "withdrawn"]


def test_files_landed_before_versions_were_recorded_keep_their_order():
    index = [_landed("s", "a", "p", "2026-11-01T00:00:00+00:00"), _landed("s", "b", "p", "2026-11-02T00:00:00+00:00")]
    state = record_reads(Lifecycle([], {}), index, {"s": {"p": "b"}}, "2026-11-03T00:00:00+00:00")
    assert [(r["file_sha256"], r["state"], r["reads"]) for r in version_rows(state, {"s"})] == [
        ("a", "superseded", 1), ("b", "current", 2)]

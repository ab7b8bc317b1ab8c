"""The clock and the files' reads move every refresh but seldom decide anything new (#20): an incremental
refresh asks intermediate.int_refresh_moves, and builds what they alone reach only when they change a
kept row. With nothing new only the file-version models run, and the warehouse equals a full rebuild."""
import datetime as dt
import re
import shutil

import duckdb
import pytest

from provider_eval import sql_layer
from provider_eval.paths import DEFAULT_WORKLOADS, SQL_DIR
from tests.conftest import on_one_utc_day, write_sources
from tests.flows.test_incremental_refresh import QUOTES, _refresh
from tests.flows.test_incremental_selection import _equals_full_rebuild, _models_built, spans_of

FILE_VERSION_MODELS = {"stg_file_versions", "int_file_states", "input_files", "int_refresh_moves"}


@pytest.fixture
def built(sample_warehouse, tmp_path):
    """A writable copy of the bundled samples' warehouse, and the time its build ran at."""
    copy = tmp_path / "w.duckdb"
    shutil.copy(sample_warehouse, copy)
    with duckdb.connect(str(copy)) as con:
        con.execute("set TimeZone = 'UTC'")
        (refreshed_at,) = con.execute("select refreshed_at from raw.refresh").fetchone()
        yield con, refreshed_at


def _moves(con, refreshed_at: dt.datetime) -> tuple[bool, bool]:
    """(clock_moves, reads_move) with refreshed_at as this refresh's clock."""
    con.execute("create or replace table raw.refresh as select ?::timestamptz as refreshed_at", [refreshed_at])
    return con.execute("select clock_moves, reads_move from intermediate.int_refresh_moves").fetchone()


def _same_day(when: dt.datetime) -> dt.datetime:
    """A second later, or earlier near midnight: another time of the same UTC day."""
    step = dt.timedelta(seconds=1)
    return when + step if (when + step).date() == when.date() else when - step


def test_nothing_moves_at_the_same_time_of_day(built):
    con, refreshed_at = built
    assert _moves(con, refreshed_at) == (False, False)
    assert _moves(con, _same_day(refreshed_at)) == (False, False)


def test_a_quote_flag_the_clock_now_decides_otherwise_moves_it(built):
    """Each stored flag, when it is not what the clock says, counts."""
    con, refreshed_at = built
    table = "intermediate.int_quote_latest"
    for flag in ("is_expired", "is_not_yet_valid", "is_too_old"):
        con.execute(f"update {table} set {flag} = not {flag} "
                    f"where offer_option_id = (select min(offer_option_id) from {table})")
        assert _moves(con, refreshed_at) == (True, False), flag
        con.execute(f"update {table} set {flag} = not {flag} "
                    f"where offer_option_id = (select min(offer_option_id) from {table})")
        assert _moves(con, refreshed_at) == (False, False)


def test_the_history_holds_no_flag_the_clock_decides(built):
    """Staging keeps no clock-decided column: a refresh never rewrites (or scans for) the history's rows
    to age them; only each option's latest observation carries the flags."""
    con, _ = built
    columns = {r[0] for r in con.execute(
        "select column_name from information_schema.columns "
        "where table_schema = 'staging' and table_name = 'stg_quote_observations'").fetchall()}
    assert "observed_at" in columns and "is_age_unknown" in columns
    assert not columns & {"is_expired", "is_not_yet_valid", "is_too_old"}


def test_a_new_day_moves_the_costed_quotes_ages(built):
    """With no flag that can age, a day later still changes every dated quote's age in days."""
    con, refreshed_at = built
    con.execute("update intermediate.int_quote_latest set valid_until = null, valid_from = null, "
                "max_quote_age_days = null, is_expired = false, is_not_yet_valid = false, is_too_old = false")
    assert con.execute("select count(quote_age_days) from intermediate.int_workload_costs").fetchone()[0] > 0
    assert _moves(con, _same_day(refreshed_at)) == (False, False)
    assert _moves(con, refreshed_at + dt.timedelta(days=1)) == (True, False)
    assert _moves(con, refreshed_at + dt.timedelta(days=400)) == (True, False)


def test_an_unlisted_option_not_flagged_yet_moves_with_the_reads(built):
    """An option whose latest observation is in a file no longer current: another read may flag it,
    until it is flagged (reads only add up)."""
    con, refreshed_at = built
    source, file = con.execute("select source_name, file_sha256 from intermediate.int_quote_latest "
                               "order by offer_option_id limit 1").fetchone()
    con.execute("update intermediate.int_file_states set state = 'superseded' "
                "where source_name = ? and file_sha256 = ?", [source, file])
    assert _moves(con, refreshed_at) == (False, True)
    con.execute("update intermediate.int_quote_latest set is_not_listed = true "
                "where source_name = ? and file_sha256 = ?", [source, file])
    assert _moves(con, refreshed_at) == (False, False)


def test_only_these_models_read_the_clock():
    """Every reader of raw.refresh is covered by int_refresh_moves: a new one must be added there
    (its clock-decided columns compared), or a refresh would keep a stale row."""
    named = {p.relative_to(SQL_DIR).as_posix() for p in SQL_DIR.rglob("*.sql")
             if re.search(r"source\(\s*'raw'\s*,\s*'refresh'\s*\)", p.read_text(encoding="utf-8"))}
    assert named == {"models/intermediate/int_quote_latest.sql", "models/intermediate/int_refresh_moves.sql",
                     "macros/quote_clock_flags.sql", "macros/workload_cost_incremental.sql"}


def test_settled_reads_skip_the_read_counters_and_nothing_builds_nothing(tmp_path):
    sql_layer.write_profile(tmp_path, tmp_path / "warehouse.duckdb", "1GB", None)
    manifest = sql_layer.parsed(SQL_DIR, tmp_path, tmp_path / "warehouse.duckdb")
    assert "int_quote_latest+" in sql_layer.selection(manifest, {"raw.file_versions"})
    settled = sql_layer.selection(manifest, {"raw.file_versions"}, reads_settled=True)
    assert {"stg_file_versions", "int_file_states", "input_files+"} <= set(settled)
    assert not any(t.startswith("int_quote_latest") for t in settled)
    assert sql_layer.selection(manifest, set()) == []


def _gated(refresh_once) -> bool:
    """Whether refresh_once() ran the quality gate."""
    return bool(spans_of("quality_gate", refresh_once))


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory):
    """One quotes source refreshed three times: once, again with nothing new, and again after one stored
    quote flag was set to what the clock does not say (as a clock that crossed a boundary would find it)."""
    return on_one_utc_day(lambda: _refreshed(tmp_path_factory))


def _refreshed(tmp_path_factory):
    """The fixture's refreshes, in a folder of their own."""
    root = tmp_path_factory.mktemp("moves")
    (root / "quotes").mkdir()
    (root / "quotes" / "a.csv").write_text(QUOTES, encoding="utf-8")
    sources = write_sources(root, [{"name": "quotes", "kind": "quotes", "format": "quote-csv",
                                    "path": "quotes/*.csv", "defaults": {"currency": "USD"}}])
    warehouse = root / "wh" / "w.duckdb"
    out = {"first": _models_built(lambda: _refresh(warehouse, sources))}
    docs = warehouse.parent / "data_docs" / "index.html"
    docs_before = docs.stat().st_mtime_ns
    out["nothing_new"] = _models_built(lambda: out.update(nothing_new_gated=_gated(lambda: _refresh(warehouse, sources))))
    out["docs_kept"] = docs.stat().st_mtime_ns == docs_before
    out["nothing_new_vs_full"] = _equals_full_rebuild(warehouse, sources, DEFAULT_WORKLOADS)
    flagged = "offer_option_id = (select min(offer_option_id) from intermediate.int_quote_latest)"
    with duckdb.connect(str(warehouse)) as con:
        con.execute(f"update intermediate.int_quote_latest set is_expired = not is_expired where {flagged}")
    out["clock"] = _models_built(lambda: out.update(clock_gated=_gated(lambda: _refresh(warehouse, sources))))
    with duckdb.connect(str(warehouse), read_only=True) as con:
        out["expired_after"] = con.execute(
            f"select is_expired from intermediate.int_quote_latest where {flagged}").fetchall()
    out["clock_vs_full"] = _equals_full_rebuild(warehouse, sources, DEFAULT_WORKLOADS)
    return out


def test_a_refresh_with_nothing_new_builds_only_the_file_version_models(refreshed):
    assert FILE_VERSION_MODELS < refreshed["first"]
    assert refreshed["nothing_new"] == FILE_VERSION_MODELS
    # Nothing the quality gate validates changed: the published warehouse's passed gate stands.
    assert not refreshed["nothing_new_gated"] and refreshed["docs_kept"]
    differences = refreshed["nothing_new_vs_full"]
    assert differences and all(d == (0, 0) for d in differences.values()), differences


def test_a_flag_the_clock_decides_otherwise_rebuilds_what_the_clock_reaches(refreshed):
    assert refreshed["clock_gated"]
    assert {"int_quote_latest", "int_offers", "offers", "int_workload_costs",
            "int_workload_ranks"} <= refreshed["clock"]
    # The history's models do not depend on the clock: they stay as they were.
    assert not {"stg_quote_observations", "offer_history"} & refreshed["clock"]
    assert refreshed["expired_after"] == [(False,)] * len(refreshed["expired_after"]) != []
    differences = refreshed["clock_vs_full"]
    assert differences and all(d == (0, 0) for d in differences.values()), differences


def test_the_gate_reads_nothing_a_refresh_with_nothing_new_rebuilds():
    """gate.unchanged_since_passed holds only while the suites read no read count, last-seen time or
    the models only those feed; of int_file_states, only its states."""
    source = (SQL_DIR.parent / "flows" / "quality" / "suites.py").read_text(encoding="utf-8")
    assert not re.findall(r"stg_file_versions|input_files|int_refresh_moves|last_seen_at|\breads\b|file_versions", source)
    assert re.findall(r"int_file_states as (\w+)", source) == ["f"]
    assert set(re.findall(r"\bf\.(\w+)", source)) == {"source_name", "file_sha256", "state"}

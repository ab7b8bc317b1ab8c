"""Atomic publish: readers never hit a lock, and a failed refresh leaves the old warehouse published."""
import hashlib
import shutil
import threading

import duckdb

from provider_eval.paths import SQL_DIR
from tests.conftest import query, run_refresh, write_sources


SEED_RANKED = "select count(*) from rankings where workload_id = 'seed-000-same-task'"


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_reader_keeps_working_while_a_refresh_publishes(tmp_path, sample_warehouse):
    warehouse = tmp_path / "w.duckdb"
    shutil.copy(sample_warehouse, warehouse)  # published by a refresh of the bundled data
    before_inode = warehouse.stat().st_ino
    reader = duckdb.connect(str(warehouse), read_only=True)
    errors, reads = [], [0]
    stop = threading.Event()

    def keep_reading():
        # A second analyst opening fresh connections in a loop during the refresh.
        while not stop.is_set():
            try:
                with duckdb.connect(str(warehouse), read_only=True) as con:
                    con.execute("select count(*) from rankings").fetchone()
                reads[0] += 1
            except duckdb.Error as exc:
                errors.append(exc)

    thread = threading.Thread(target=keep_reading)
    thread.start()
    try:
        assert run_refresh(warehouse).is_completed()
    finally:
        stop.set()
        thread.join()
    assert errors == [] and reads[0] > 0
    # The open reader still sees its snapshot; new connections see the new file.
    assert reader.execute(SEED_RANKED).fetchone()[0] == 3
    reader.close()
    assert warehouse.stat().st_ino != before_inode
    assert query(warehouse, SEED_RANKED)[0][0] == 3


def test_failed_checks_keep_the_previous_warehouse(tmp_path, sample_warehouse):
    warehouse = tmp_path / "w.duckdb"
    shutil.copy(sample_warehouse, warehouse)  # published by a refresh of the bundled data
    published = _digest(warehouse)
    broken_sql = tmp_path / "sql"
    shutil.copytree(SQL_DIR, broken_sql)
    (broken_sql / "tests" / "assert_nothing_ranked.sql").write_text(
        "-- deliberately failing check for this test\nselect * from {{ ref('rankings') }}\n")
    state = run_refresh(warehouse, sql_dir=broken_sql)
    assert state.is_failed()
    assert "assert_nothing_ranked" in state.message and "the previous warehouse stays published" in state.message
    assert _digest(warehouse) == published
    assert not any((tmp_path / ".build").iterdir()), "a failed refresh leaves no build files behind"


def test_bad_configuration_fails_before_touching_the_warehouse(tmp_path, sample_warehouse):
    warehouse = tmp_path / "w.duckdb"
    shutil.copy(sample_warehouse, warehouse)  # published by a refresh of the bundled data
    published = _digest(warehouse)
    sources = write_sources(tmp_path, [{"name": "x", "kind": "quotes", "format": "quote-csv",
                                        "path": "q.csv", "colour": "blue"}])
    state = run_refresh(warehouse, sources=sources)
    assert state.is_failed()
    assert "line 2" in state.message and "colour" in state.message
    assert _digest(warehouse) == published


def test_a_broken_sql_model_fails_with_its_file_name(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    broken_sql = tmp_path / "sql"
    shutil.copytree(SQL_DIR, broken_sql)
    (broken_sql / "models" / "marts" / "rankings.sql").write_text("select no_such_column from {{ ref('workload_costs') }}\n")
    state = run_refresh(warehouse, sql_dir=broken_sql)
    assert state.is_failed()
    assert "models/marts/rankings.sql" in state.message
    assert not warehouse.exists()


def test_the_replaced_warehouse_is_removed_in_the_background_and_a_reader_keeps_it(tmp_path):
    """publish links the replaced file into the build folder, renames, and unlinks it on a thread:
    readers of the old file keep their snapshot, the new one is published, nothing is left behind."""
    from provider_eval import warehouse

    published, build = tmp_path / "w.duckdb", tmp_path / "build.duckdb"
    for path, value in ((published, "old"), (build, "new")):
        with duckdb.connect(str(path)) as con:
            con.execute(f"create table t as select '{value}' as v")
    reader = duckdb.connect(str(published), read_only=True)
    remover = warehouse.publish(build, published, retired_dir=tmp_path / ".build")
    remover.join()
    assert not build.exists() and list((tmp_path / ".build").iterdir()) == []
    assert reader.execute("select v from t").fetchall() == [("old",)]
    reader.close()  # (DuckDB shares one instance per path in a process: closed before opening the new file)
    assert query(published, "select v from t") == [("new",)]
    # Nothing published before: nothing to retire, no thread.
    with duckdb.connect(str(build)) as con:
        con.execute("create table t as select 'first' as v")
    assert warehouse.publish(build, tmp_path / "fresh.duckdb", retired_dir=tmp_path / ".build") is None

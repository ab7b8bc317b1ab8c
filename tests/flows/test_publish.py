"""Atomic publish: readers never hit a lock, and a failed refresh leaves the old warehouse published."""
import hashlib
import os
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


def _started_from(warehouse):
    return query(warehouse, "select started_from from raw.build")[0][0]


def test_publish_keeps_the_replaced_file_for_the_next_build(tmp_path):
    """keep_previous: the replaced file is linked at previous_path (same inode, readers keep theirs),
    the one kept before is retired in the background; without it nothing is kept."""
    from provider_eval import warehouse

    published, retired = tmp_path / "w.duckdb", tmp_path / ".build"

    def build(value):
        path = tmp_path / f"build-{value}.duckdb"
        with duckdb.connect(str(path)) as con:
            con.execute(f"create table t as select '{value}' as v")
        return path

    previous = warehouse.previous_path(published)
    assert warehouse.publish(build("one"), published, retired, keep_previous=True) is None  # nothing replaced
    assert not previous.exists()
    one = published.stat().st_ino
    assert warehouse.publish(build("two"), published, retired, keep_previous=True) is None  # nothing dropped
    assert previous.stat().st_ino == one and query(previous, "select v from t") == [("one",)]
    two = published.stat().st_ino
    warehouse.publish(build("three"), published, retired, keep_previous=True).join()
    assert previous.stat().st_ino == two and list(retired.iterdir()) == []
    # Turned off: the kept file goes too, and none is kept.
    warehouse.publish(build("four"), published, retired, keep_previous=False).join()
    assert not previous.exists() and list(retired.iterdir()) == []
    assert query(published, "select v from t") == [("four",)]


def test_take_previous_leaves_a_file_a_reader_in_this_process_holds(tmp_path):
    """POSIX locks never conflict within one process, so DuckDB would let this process write a file
    its own reader still reads: take_previous drops such a file (the reader keeps it) instead."""
    from provider_eval import warehouse

    published = tmp_path / "w.duckdb"
    previous = warehouse.previous_path(published)
    previous.parent.mkdir()
    with duckdb.connect(str(previous)) as con:
        con.execute("create table t as select 'kept' as v")
    published.write_bytes(b"")  # (its bytes are not read)
    reader = duckdb.connect(str(previous), read_only=True)
    build = tmp_path / "build" / "warehouse.duckdb"
    assert not warehouse.take_previous(published, build)
    assert not build.exists() and not previous.exists()
    assert reader.execute("select v from t").fetchall() == [("kept",)]
    reader.close()
    with duckdb.connect(str(previous)) as con:
        con.execute("create table t as select 'free' as v")
    assert warehouse.take_previous(published, build) and not previous.exists()
    assert query(build, "select v from t") == [("free",)]


def test_take_previous_never_takes_a_file_another_name_links(tmp_path):
    """A publish killed between keeping the replaced file and its rename leaves the kept file a second
    name of the published one: building on it would write the published file in place."""
    from provider_eval import warehouse

    published = tmp_path / "w.duckdb"
    with duckdb.connect(str(published)) as con:
        con.execute("create table t as select 'published' as v")
    previous = warehouse.previous_path(published)
    previous.parent.mkdir()
    os.link(published, previous)
    build = tmp_path / "build" / "warehouse.duckdb"
    assert not warehouse.take_previous(published, build)
    assert not build.exists() and not previous.exists() and published.stat().st_nlink == 1
    assert query(published, "select v from t") == [("published",)]


READER = """
import sys, duckdb
con = duckdb.connect(':memory:')
con.execute("attach '" + sys.argv[1].replace("'", "''") + "' as w (read_only)")
count = lambda: con.execute('select count(*), sum(usd_per_node_hour) from w.offers').fetchone()
print(count(), flush=True)
sys.stdin.readline()
print(count(), flush=True)
"""


def test_a_refresh_builds_on_the_replaced_file_unless_a_reader_holds_it(tmp_path, sample_warehouse):
    """The second refresh after a publish starts from the file that publish replaced (no copy); a
    reader in another process that still has that file open makes the next one copy instead, and
    reads its snapshot undisturbed."""
    import subprocess
    import sys

    from tests.fault_trials import quote_file, sources_with

    warehouse = tmp_path / "wh" / "w.duckdb"
    warehouse.parent.mkdir()
    shutil.copy(sample_warehouse, warehouse)
    reader = subprocess.Popen([sys.executable, "-c", READER, str(warehouse)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        seen = reader.stdout.readline()
        one = sources_with(tmp_path, {"one": quote_file(tmp_path, "one")})
        assert run_refresh(warehouse, sources=one).is_completed()
        assert _started_from(warehouse) == "copy"  # nothing replaced before: nothing kept yet
        previous = warehouse.parent / ".previous" / warehouse.name
        assert previous.is_file()  # the sample warehouse, which the reader holds
        two = sources_with(tmp_path, {"one": quote_file(tmp_path, "one"), "two": quote_file(tmp_path, "two")})
        assert run_refresh(warehouse, sources=two).is_completed()
        assert _started_from(warehouse) == "copy"
        reader.stdin.write("\n")
        reader.stdin.flush()
        assert reader.stdout.readline() == seen  # its file was dropped, never written
    finally:
        reader.kill()
        reader.wait()
    three = sources_with(tmp_path, {n: quote_file(tmp_path, n) for n in ("one", "two", "three")})
    assert run_refresh(warehouse, sources=three).is_completed()
    assert _started_from(warehouse) == "previous"
    assert query(warehouse, "select count(*) from offers where provider in ('one', 'two', 'three')") == [(3,)]
    # The same inputs again: nothing new since the published warehouse, so its copy is the cheaper start.
    assert run_refresh(warehouse, sources=three).is_completed()
    assert _started_from(warehouse) == "copy"
    assert not [p for p in (warehouse.parent / ".build").iterdir()]

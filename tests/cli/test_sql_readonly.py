"""`provider-eval sql` (and every reader of the published warehouse) can read it and write nothing, anywhere."""
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from provider_eval import warehouse
from provider_eval.exit_codes import ExitCode
from provider_eval.paths import PROJECT_ROOT


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "provider_eval", *args], capture_output=True, text=True,
                          cwd=PROJECT_ROOT, timeout=60)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture()
def layout(tmp_path):
    """A published warehouse with the files beside it that an escape would target."""
    published = tmp_path / "provider_eval.duckdb"
    with duckdb.connect(str(published)) as con:
        con.execute("create table offers as select 'o-1' as offer_id, 2.10::decimal(18, 6) as usd_per_gpu_hour")
        con.execute("create view cheap as select * from offers where usd_per_gpu_hour < 3")
    cache = tmp_path / "staged-cache" / published.name / "entry.parquet"
    cache.parent.mkdir(parents=True)
    with duckdb.connect() as con:
        con.execute(f"copy (select 'o-1' as offer_id, 5 as setup_fee) to '{cache}' (format parquet)")
    other = tmp_path / "other.duckdb"
    with duckdb.connect(str(other)) as con:
        con.execute("create table t as select 1 as a")
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the sql command\n")
    files = [published, cache, other, secret]
    return {"published": published, "cache": cache, "other": other, "secret": secret, "tmp": tmp_path,
            "before": {p: digest(p) for p in files}}


ESCAPES = [
    "copy (select 1 as a) to '{tmp}/out.csv'",
    "copy (select 'forged' as offer_id) to '{published}'",
    "copy (select 'forged' as offer_id, -100 as setup_fee) to '{cache}' (format parquet)",
    "copy offers to '{tmp}/offers.parquet' (format parquet)",
    "attach '{other}' as o (read_only false)",
    "attach '{other}' as o; create table o.forged as select 1",
    "attach '{tmp}/new.duckdb' as n",
    "export database '{tmp}/exported'",
    "import database '{tmp}'",
    "install httpfs",
    "load httpfs",
    "load '{tmp}/evil.duckdb_extension'",
    "set enable_external_access = true",
    "reset enable_external_access",
    "set lock_configuration = false",
    "pragma enable_profiling",
    "set profiling_output = '{tmp}/profile.json'",
    "set memory_limit = '1TB'",
    "create table forged as select 1",
    "insert into offers values ('forged', 0)",
    "update offers set usd_per_gpu_hour = 0",
    "drop table offers",
    "select * from read_text('{secret}')",
    "select * from read_csv('{secret}')",
    "select * from '{secret}'",
    "select * from read_parquet('{cache}')",
    "select * from glob('{tmp}/*')",
    "create secret (type s3, key_id 'x', secret 'y')",
    "select 1; copy (select 1) to '{tmp}/second-statement.csv'",
]


@pytest.mark.parametrize("sql", ESCAPES)
def test_no_escape_writes_or_reads_another_file(layout, sql):
    done = cli("sql", sql.format(**{k: v for k, v in layout.items() if k != "before"}), "-w", str(layout["published"]))
    assert done.returncode == ExitCode.USAGE, (done.returncode, done.stdout, done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    # Refused as read-only, or (a bare file name) not even tried as a file.
    assert "read-only" in done.stderr or "does not exist" in done.stderr
    assert "not for the sql command" not in done.stdout
    assert {p: digest(p) for p in layout["before"]} == layout["before"]
    assert sorted(p.name for p in layout["tmp"].iterdir()) == sorted(
        ["provider_eval.duckdb", "staged-cache", "other.duckdb", "secret.txt"])


@pytest.mark.parametrize("sql, expected", [
    ("select offer_id from offers", [{"offer_id": "o-1"}]),
    ("select offer_id from cheap", [{"offer_id": "o-1"}]),
    ("with x as (select usd_per_gpu_hour * 2 as d from offers) select d from x", [{"d": 4.2}]),
    ("show tables", [{"name": "cheap"}, {"name": "offers"}]),
    ("select count(*) as n from (describe offers)", [{"n": 2}]),
    ("select column_name, count from (summarize offers) order by 1",
     [{"column_name": "offer_id", "count": 1}, {"column_name": "usd_per_gpu_hour", "count": 1}]),
    ("select current_setting('TimeZone') as tz", [{"tz": "UTC"}]),
    # Scratch space lives in this command's memory and is gone when it ends: no file is written.
    ("create temp table mine as select 1 as a; select a from mine", [{"a": 1}]),
    ("create table memory.main.scratch as select 2 as b; select b from memory.main.scratch", [{"b": 2}]),
    ("attach ':memory:' as m; create table m.t as select 3 as c; select c from m.t", [{"c": 3}]),
])
def test_analyst_queries_still_work(layout, sql, expected):
    done = cli("sql", sql, "-w", str(layout["published"]), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == expected
    assert {p: digest(p) for p in layout["before"]} == layout["before"]


def test_explain_works(layout):
    done = cli("sql", "explain select * from offers", "-w", str(layout["published"]))
    assert done.returncode == 0 and "SEQ_SCAN" in done.stdout.upper().replace(" ", "_")


def test_another_connection_in_the_same_process_does_not_block_the_locked_one(layout):
    # DuckDB refuses a second open of one file with other settings in one process; attaching avoids it.
    with duckdb.connect(str(layout["published"]), read_only=True) as held:
        with warehouse.connect_published(layout["published"]) as con:
            assert con.execute("select count(*) from offers").fetchone() == held.execute(
                "select count(*) from offers").fetchone() == (1,)


def test_the_locked_connection_is_what_every_reader_gets(layout):
    # rank, explain, report, validate-host's quote lookup and the refresh's row counts all open it here.
    with warehouse.connect_published(layout["published"]) as con:
        assert con.execute("select current_setting('enable_external_access')").fetchone() == (False,)
        assert con.execute("select current_setting('lock_configuration')").fetchone() == (True,)
        with pytest.raises(duckdb.Error, match="locked"):
            con.execute("set enable_external_access = true")
        with pytest.raises(duckdb.PermissionException):
            con.execute(f"copy offers to '{layout['tmp']}/x.csv'")
    assert not (layout["tmp"] / "x.csv").exists()

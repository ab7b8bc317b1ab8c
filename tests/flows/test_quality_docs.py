"""docs/quality-and-report.md lists exactly the suites the quality gate runs (flows/quality/suites.py)."""
import datetime as dt
import re
from pathlib import Path

import duckdb

from flows.quality.suites import all_suites

DOC = Path(__file__).resolve().parents[2] / "docs" / "quality-and-report.md"


def _gate_suite_names() -> list[str]:
    """The suite names all_suites gives for a warehouse with the tables it reads (empty ones)."""
    con = duckdb.connect()
    for schema in ("ref", "raw", "intermediate"):
        con.execute(f"create schema {schema}")
    con.execute("create table ref.price_bands (gpu_model varchar, min_usd_per_gpu_hour double, max_usd_per_gpu_hour double)")
    con.execute("insert into ref.price_bands values ('MI300X', 0.475, 12.0), ('*', 0, 12.0)")
    con.execute("""create table raw.ingest_manifest ("table" varchar, rows_accepted bigint, rows_quarantined bigint,
                   status varchar, source_name varchar, file_sha256 varchar)""")
    con.execute("create table intermediate.int_file_states (source_name varchar, file_sha256 varchar, state varchar)")
    return [suite.name for suite in all_suites(con, dt.datetime.now(dt.timezone.utc))]


def test_the_suites_table_names_every_suite_the_gate_runs():
    section = DOC.read_text(encoding="utf-8").split("### Suites", 1)[1].split("\n### ", 1)[0]
    documented = [name for row in re.findall(r"^\| (`[^|]+`) \|", section, flags=re.M)
                  for name in re.findall(r"`([a-z_]+)`", row)]
    assert sorted(documented) == sorted(_gate_suite_names())

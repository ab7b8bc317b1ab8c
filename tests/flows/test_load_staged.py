"""Staged Parquet loads into raw.* whole, and a later build's rows come after every older row (flows/load.py)."""
import duckdb
import polars as pl

from flows.ingest.stage import FileOutcome
from flows.load import contract_schema, load_staged
from models import CONTRACTS

SCHEMA = contract_schema(CONTRACTS["quote_observations"])


def _file(tmp_path, number: int, rows: int) -> FileOutcome:
    """One staged scrape file of `rows` quote rows (the columns the loader and its keys need)."""
    sha = f"{number:064x}"
    frame = pl.DataFrame({"source_name": ["s"] * rows, "source_file": [f"f{number}.csv"] * rows,
                          "file_sha256": [sha] * rows, "row_number": list(range(1, rows + 1)),
                          "offer_id": [f"o{number}-{i}" for i in range(rows)]}).with_columns(
        [pl.lit(None, dtype).alias(c) for c, dtype in SCHEMA.items()
         if c not in ("source_name", "source_file", "file_sha256", "row_number", "offer_id")]
    ).select(list(SCHEMA)).cast(SCHEMA)
    path = tmp_path / f"{number}.quote_observations.parquet"
    frame.write_parquet(path, row_group_size=1_000)
    return FileOutcome("s", "quote-csv", "quote_observations", sha, f"/in/f{number}.csv", "2026-12-01T00:00:00+00:00",
                       "loaded", None, rows, rows, 0, str(path), None)


def _workloads(tmp_path):
    path = tmp_path / "workloads.parquet"
    pl.DataFrame({"workload_id": ["w"]}).write_parquet(path)
    return path


def test_every_staged_row_loads_once_and_a_later_build_appends_after_them(tmp_path):
    first = [_file(tmp_path, n, 3_000 + n) for n in range(6)]
    con = duckdb.connect()
    load_staged(con, first, _workloads(tmp_path), "2026-12-01T00:00:00+00:00")
    # Every row of every file, each once, whatever order the load stored them in.
    loaded = con.execute("select file_sha256, row_number, offer_id from raw.quote_observations "
                         "order by all").fetchall()
    expected = sorted((o.file_sha256, i + 1, f"o{n}-{i}") for n, o in enumerate(first) for i in range(o.rows_in))
    assert loaded == expected
    # The loader's own setting does not leak into what runs on the connection after it.
    assert con.execute("select current_setting('preserve_insertion_order')").fetchone()[0] is True
    # raw_rows_of_files takes a new file's rows by row id: they must follow every older row.
    later = _file(tmp_path, 9, 2_500)
    done = load_staged(con, [*first, later], _workloads(tmp_path), "2026-12-02T00:00:00+00:00", incremental=True)
    assert done["files_added"] == 1
    oldest_new, newest_old = con.execute(
        "select min(rowid) filter (where file_sha256 = ?), max(rowid) filter (where file_sha256 <> ?) "
        "from raw.quote_observations", [later.file_sha256, later.file_sha256]).fetchone()
    assert oldest_new > newest_old
    assert con.execute("select count(*) from raw.quote_observations").fetchone()[0] == sum(
        o.rows_in for o in [*first, later])

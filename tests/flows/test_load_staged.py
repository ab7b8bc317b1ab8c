"""Staged Parquet loads into raw.* whole, and a later build's rows come after every older row (flows/load.py)."""
import duckdb
import polars as pl
import pytest

from flows.ingest.stage import FileOutcome
from flows.load import contract_schema, load_staged
from models import CONTRACTS
from tests.conftest import on_one_utc_day, write_sources

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


SCRAPE_HEADER = "provider,offer_id,gpu_model,gpus_per_node,price,currency,price_unit,price_scope,billing_model,billing_granularity,observed_at\n"


def _tied_scrapes(root):
    """Three scrape files of one source stating the same time for the same offers at other prices: which
    one is the latest is a tie the models must break the same way whatever order the rows come in."""
    (root / "q").mkdir(parents=True)
    for name, price in (("a", "2.10"), ("b", "2.20"), ("c", "2.30")):
        (root / "q" / f"{name}.csv").write_text(SCRAPE_HEADER + "".join(
            f"tied-cloud,offer-{i},MI300X,8,{price},USD,hour,per_gpu,on_demand,hour,2026-12-01T00:00:00Z\n"
            for i in range(3)), encoding="utf-8")
    return write_sources(root, [{"name": "tied", "kind": "quotes", "format": "quote-csv", "path": "q/*.csv"}])


@pytest.mark.parametrize("inputs", ["bundled samples", "tied scrapes"])
def test_public_tables_do_not_depend_on_the_order_staged_rows_reach_raw(inputs, tmp_path, monkeypatch):
    """The load may store a build's rows in any order: every public table is the same with the staged
    files loaded forwards or backwards (a model whose answer hung on which of two tied rows it met
    first would differ; dropping int_quote_latest's tie-breakers fails this on the tied scrapes)."""
    import flows.load as load
    from bench.compare_warehouses import compare
    from flows.refresh import refresh
    from provider_eval.paths import DATA_DIR, DEFAULT_WORKLOADS, SQL_DIR

    sources = DATA_DIR / "sources.yaml" if inputs == "bundled samples" else _tied_scrapes(tmp_path / "in")

    def build(name: str):
        # One folder, so one landing store: undated quotes take the time their file landed, the same here.
        warehouse = tmp_path / f"{name}.duckdb"
        state = refresh(sources=str(sources), workloads=str(DEFAULT_WORKLOADS),
                        warehouse_path=str(warehouse), sql_dir=str(SQL_DIR), return_state=True)
        assert state.is_completed(), state.message
        with duckdb.connect(str(warehouse), read_only=True) as con:
            first = con.execute("select source_name, file_sha256 from raw.quote_observations limit 1").fetchone()
        return warehouse, first

    forwards = load._parquets

    def both():
        monkeypatch.setattr(load, "_parquets", forwards)
        one = build("forwards")
        monkeypatch.setattr(load, "_parquets", lambda outcomes, table: forwards(outcomes, table)[::-1])
        return one, build("backwards")

    (forward, forward_first), (backward, backward_first) = on_one_utc_day(both)
    assert forward_first != backward_first  # the two loads did store the rows in another order
    assert {t: d for t, d in compare(str(forward), str(backward)).items() if d != (0, 0)} == {}

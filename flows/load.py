"""Load reference data (schema `ref`), staged Parquet and the manifest (schema `raw`) into a new warehouse file."""
import csv
from dataclasses import asdict
from pathlib import Path

import duckdb
import pandera.polars as pa
import polars as pl

from flows.ingest.adapters.base import QUARANTINE_COLUMNS
from flows.ingest.stage import FileOutcome
from models import CONTRACTS

QUARANTINE_SCHEMA = {"source_name": pl.String, "source_file": pl.String, "file_sha256": pl.String,
                     **QUARANTINE_COLUMNS}
MANIFEST_SCHEMA = {
    "file_sha256": pl.String, "source_name": pl.String, "format": pl.String, "table": pl.String,
    "original_path": pl.String, "status": pl.String, "reason": pl.String, "rows_in": pl.Int64,
    "rows_accepted": pl.Int64, "rows_quarantined": pl.Int64, "first_seen_at": pl.String,
}

FILE_VERSIONS_SCHEMA = {
    "source_name": pl.String, "original_path": pl.String, "version": pl.Int64, "file_sha256": pl.String,
    "state": pl.String, "superseded_by": pl.String, "first_seen_at": pl.String, "last_seen_at": pl.String,
    "reads": pl.Int64,
}


def contract_schema(contract: type[pa.DataFrameModel]) -> dict:
    """The polars schema a contract describes (used for tables no file fed this time)."""
    return {name: col.dtype.type for name, col in contract.to_schema().columns.items()}


def _load_parquet(con: duckdb.DuckDBPyConnection, table: str, files: list[str], schema: dict) -> None:
    """raw.<table> with the given columns, filled from the Parquet files (none: empty)."""
    con.execute("create schema if not exists raw")
    empty = pl.DataFrame(schema=schema)
    con.register("__empty", empty.to_arrow())
    con.execute(f'create table raw."{table}" as select * from __empty')
    con.unregister("__empty")
    if files:
        # union_by_name: files are read by column name, never by position.
        con.execute(f'insert into raw."{table}" by name select * from read_parquet(?, union_by_name = true)', [files])


def load_empty(con: duckdb.DuckDBPyConnection, table: str, contract: type[pa.DataFrameModel]) -> None:
    """An empty raw.<table> shaped by a contract (a raw table no file fed, for one-row SQL checks)."""
    _load_parquet(con, table, [], contract_schema(contract))


def load_reference(con: duckdb.DuckDBPyConnection, reference_dir: Path) -> list[str]:
    """Every CSV in data/reference becomes a table ref.<stem>."""
    names = []
    con.execute("create schema if not exists ref")
    for path in sorted(reference_dir.glob("*.csv")):
        name = path.stem
        options = f"header = true, sample_size = -1{_text_types(path)}"
        con.execute(f'create table ref."{name}" as select * from read_csv(?, {options})', [str(path)])
        names.append(name)
    return names


def _text_types(path: Path) -> str:
    """Columns named *version* stay text: type sniffing would read '2.10' as 2.1 and '6.0' as 6."""
    with path.open(newline="", encoding="utf-8") as f:
        header = next(csv.reader(f), [])
    text = [c for c in header if "version" in c]
    if not text:
        return ""
    return ", types = {" + ", ".join("'" + c.replace("'", "''") + "': 'VARCHAR'" for c in text) + "}"


def load_staged(con: duckdb.DuckDBPyConnection, outcomes: list[FileOutcome], workloads_parquet: Path,
                refreshed_at: str, file_versions: list[dict] = ()) -> None:
    """Create the raw.* tables the SQL models read (file_versions: flows.ingest.versions.version_rows)."""
    for table, contract in CONTRACTS.items():
        files = [o.accepted_parquet for o in outcomes if o.table == table and o.accepted_parquet]
        files += [o.detail_parquets[table] for o in outcomes if table in o.detail_parquets]
        _load_parquet(con, table, files, contract_schema(contract))
    quarantine_files = [o.quarantine_parquet for o in outcomes if o.quarantine_parquet]
    _load_parquet(con, "quarantine", quarantine_files, QUARANTINE_SCHEMA)
    manifest = pl.DataFrame(
        [{k: v for k, v in asdict(o).items() if k in MANIFEST_SCHEMA} for o in outcomes],
        schema=MANIFEST_SCHEMA,
    )
    con.register("__manifest", manifest.to_arrow())
    con.execute("create table raw.ingest_manifest as select * from __manifest")
    con.unregister("__manifest")
    versions = pl.DataFrame([{k: r[k] for k in FILE_VERSIONS_SCHEMA} for r in file_versions],
                            schema=FILE_VERSIONS_SCHEMA)
    con.register("__versions", versions.to_arrow())
    con.execute("create table raw.file_versions as select * from __versions")
    con.unregister("__versions")
    con.execute("create table raw.workloads as select * from read_parquet(?)", [str(workloads_parquet)])
    con.execute("create table raw.refresh as select ?::timestamptz as refreshed_at", [refreshed_at])

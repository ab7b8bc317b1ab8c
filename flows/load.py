"""Load reference data (schema `ref`), staged Parquet and the manifest (schema `raw`) into a warehouse being built.

A full load fills new tables; an incremental one (the build started from a copy of the published
warehouse) appends only the staged files raw.* does not hold yet and deletes the rows of the files
no longer staged (docs/production.md, "Incremental refresh").
"""
import csv
import hashlib
import json
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import duckdb
import pandera.polars as pa
import polars as pl

from flows.ingest.adapters.quarantine import QUARANTINE_COLUMNS
from flows.ingest.stage import FileOutcome
from models import CONTRACTS
from provider_eval import progress

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


# Bookkeeping of what raw.* holds, per staged file (load_key: the file's stage-cache entry), and what
# this build changed, for the incremental SQL models: change = 'added' | 'removed' (a file's rows),
# or 'state' (a file whose state, successor or paths changed: superseded by a new version of its path,
# withdrawn, listed again; the models recompute what its rows decide, not its whole source).
LOADED_FILES_SCHEMA = {"load_key": pl.String, "source_name": pl.String, "file_sha256": pl.String}
FILE_CHANGES_SCHEMA = {"source_name": pl.String, "file_sha256": pl.String, "change": pl.String}
# The raw tables filled from staged Parquet, file by file.
STAGED_TABLES = (*CONTRACTS, "quarantine")
# What the rows of a warehouse depend on besides the staged Parquet: a change to any of these makes
# an incremental build unsafe (an incremental model would keep rows computed by the old code).
FINGERPRINT_DIRS = ("sql", "models", "data/reference")
FINGERPRINT_FILES = ("flows/load.py", "flows/load_validations.py")


def build_fingerprint(sql_dir: Path) -> str:
    """sha256 over the SQL project, the contracts, the reference data and this loader (names and bytes)."""
    from provider_eval.paths import PROJECT_ROOT, REFERENCE_DIR

    roots = {"sql": sql_dir, "models": PROJECT_ROOT / "models", "data/reference": REFERENCE_DIR}
    files = [(f"{name}/{p.relative_to(roots[name])}", p) for name in FINGERPRINT_DIRS
             for p in roots[name].rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    files += [(name, PROJECT_ROOT / name) for name in FINGERPRINT_FILES]
    digest = hashlib.sha256()
    for name, path in sorted(files):
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def load_key(outcome: FileOutcome) -> str | None:
    """Which staged rows a file's outcome loads (None: it loads none): its Parquet files, named by
    their stage-cache entry, which the cache keys by bytes, settings and staging code."""
    paths = [outcome.accepted_parquet, outcome.quarantine_parquet, *outcome.detail_parquets.values()]
    names = sorted(f"{Path(p).parent.name}/{Path(p).name}" for p in paths if p)
    if not names:
        return None
    return hashlib.sha256(json.dumps([outcome.source_name, outcome.file_sha256, names]).encode()).hexdigest()


def can_load_incrementally(con: duckdb.DuckDBPyConnection, fingerprint: str) -> bool:
    """Whether this warehouse (a copy of the published one) was built by this code from this reference data."""
    tables = {r[0] for r in con.execute(
        "select table_name from information_schema.tables where table_schema = 'raw'").fetchall()}
    if not {"loaded_files", "build_fingerprint", "build", *STAGED_TABLES} <= tables:
        return False
    row = con.execute("select fingerprint from raw.build_fingerprint").fetchall()
    return row == [(fingerprint,)]


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


@progress.timed("load")
def load_reference(con: duckdb.DuckDBPyConnection, reference_dir: Path) -> list[str]:
    """Every CSV in data/reference becomes a table ref.<stem>."""
    names = []
    con.execute("create schema if not exists ref")
    for path in sorted(reference_dir.glob("*.csv")):
        name = path.stem
        options = f"header = true, sample_size = -1{_text_types(path)}"
        con.execute(f'create or replace table ref."{name}" as select * from read_csv(?, {options})', [str(path)])
        names.append(name)
    return names


def is_version_column(name: str) -> bool:
    """Whether a reference column holds version identifiers (rocm_version, torch_major_minor, …)."""
    return "version" in name or name.endswith("major_minor")


def _text_types(path: Path) -> str:
    """Version columns stay text: type sniffing would read '2.10' as 2.1 (PyTorch 2.10 would pass for
    2.1) and '6.0' as 6."""
    with path.open(newline="", encoding="utf-8") as f:
        header = next(csv.reader(f), [])
    text = [c for c in header if is_version_column(c)]
    if not text:
        return ""
    return ", types = {" + ", ".join("'" + c.replace("'", "''") + "': 'VARCHAR'" for c in text) + "}"


@contextmanager
def _any_row_order(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """While open, an insert may store its rows in any order (DuckDB's preserve_insertion_order off).

    Nothing reads raw.* by position: a model takes a file's rows by their keys, and a build's new
    rows still come after every older one (appended), so only the order among one load's rows can
    differ. Keeping that order cost a third of the load (10M quote rows at default scale: 15.4 -> 10.0 s
    measured alone; the bench's load 23.8 -> 16.3 s, docs/benchmark.md 2026-12-06 19:12)."""
    before = con.execute("select current_setting('preserve_insertion_order')").fetchone()[0]
    con.execute("set preserve_insertion_order = false")
    try:
        yield
    finally:
        con.execute(f"set preserve_insertion_order = {'true' if before else 'false'}")


def _frame_table(con: duckdb.DuckDBPyConnection, table: str, rows: list[dict], schema: dict) -> None:
    """raw.<table> replaced by these rows (small tables, rebuilt every time)."""
    frame = pl.DataFrame(rows, schema=schema)
    con.register("__frame", frame.to_arrow())
    con.execute(f'create or replace table raw."{table}" as select * from __frame')
    con.unregister("__frame")


def _parquets(outcomes: list[FileOutcome], table: str) -> list[str]:
    """The Parquet files these outcomes load into raw.<table>."""
    if table == "quarantine":
        return [o.quarantine_parquet for o in outcomes if o.quarantine_parquet]
    files = [o.accepted_parquet for o in outcomes if o.table == table and o.accepted_parquet]
    return files + [o.detail_parquets[table] for o in outcomes if table in o.detail_parquets]


def _schema(table: str) -> dict:
    return QUARANTINE_SCHEMA if table == "quarantine" else contract_schema(CONTRACTS[table])


def _state_changed_files(con: duckdb.DuckDBPyConnection, file_versions: list[dict]) -> set[tuple[str, str]]:
    """(source, file hash) of each known file with a version whose path, state or successor differs
    from the last build's (the version a new one superseded, a withdrawn file, one listed again); a new
    file at a new path changes none (it is added)."""
    key = ("source_name", "original_path", "file_sha256", "state", "superseded_by")
    old = set(con.execute(f"select {', '.join(key)} from raw.file_versions").fetchall())
    new = {tuple(r[k] for k in key) for r in file_versions}
    # A known file at a new path changes its state too (a withdrawn content listed again elsewhere).
    known = {(row[0], row[2]) for row in old}
    return {(row[0], row[2]) for row in old - new} | {(row[0], row[2]) for row in new - old if (row[0], row[2]) in known}


def holds_inputs(con: duckdb.DuckDBPyConnection, outcomes: list[FileOutcome], file_versions: list[dict]) -> bool:
    """Whether this warehouse holds exactly the staged files these outcomes load, in these file states."""
    have = {r[0] for r in con.execute("select load_key from raw.loaded_files").fetchall()}
    wanted = {k for o in outcomes if (k := load_key(o)) is not None}
    return have == wanted and not _state_changed_files(con, file_versions)


@progress.timed("load")
def load_staged(con: duckdb.DuckDBPyConnection, outcomes: list[FileOutcome], workloads_parquet: Path,
                refreshed_at: str, file_versions: list[dict] = (), incremental: bool = False,
                fingerprint: str | None = None, started_from: str = "empty") -> dict:
    """Create the raw.* tables the SQL models read (file_versions: flows.ingest.versions.version_rows).

    incremental: raw.* already holds an earlier build's files (can_load_incrementally): only new
    files are appended and the rows of files no longer staged deleted. Returns how many files were
    added and removed. fingerprint: build_fingerprint of the code building it (None: a warehouse no
    later build may start from). started_from: what the build started from ('empty', or for an
    incremental one 'copy' or 'previous': flows/refresh.py `_start`), kept in raw.build.
    tables_changed: the staged tables whose rows this load inserted or deleted, or that hold rows of
    a file whose state changed (every one in a full load).
    """
    wanted = {k: o for o in outcomes if (k := load_key(o)) is not None}
    changed: set[tuple[str, str]] = set()
    if incremental:
        have = dict(((k, (s, f)) for k, s, f in con.execute(
            "select load_key, source_name, file_sha256 from raw.loaded_files").fetchall()))
        removed = [have[k] for k in have if k not in wanted]
        added = [o for k, o in wanted.items() if k not in have]
        changed = _state_changed_files(con, file_versions)
    else:
        removed, added = [], list(wanted.values())
        con.execute("create schema if not exists raw")
        for table in STAGED_TABLES:
            _load_parquet(con, table, [], _schema(table))
    # Deletes before inserts: a file staged again under a new key (its source's settings changed)
    # keeps one copy of its rows. Within one build a (source, file hash) is loaded once (_dedupe).
    gone = pl.DataFrame([{"source_name": s, "file_sha256": f} for s, f in removed],
                        schema={"source_name": pl.String, "file_sha256": pl.String})
    # Rows deleted and inserted per staged table: a table whose rows did not move is unchanged.
    moved = dict.fromkeys(STAGED_TABLES, 0)
    if removed:
        con.register("__gone", gone.to_arrow())
        for table in STAGED_TABLES:
            moved[table] += con.execute(f'delete from raw."{table}" as t using __gone as g '
                                        'where t.source_name = g.source_name and t.file_sha256 = g.file_sha256'
                                        ).fetchall()[0][0]
        con.unregister("__gone")
    with _any_row_order(con):
        for table in STAGED_TABLES:
            files = _parquets(added, table)
            if files:
                # union_by_name: files are read by column name, never by position.
                moved[table] += con.execute(f'insert into raw."{table}" by name select * from '
                                            'read_parquet(?, union_by_name = true)', [files]).fetchall()[0][0]
    # A file whose state changed changes whether its rows count in every table holding them.
    state_changed = set()
    if changed:
        con.register("__changed", pl.DataFrame([{"source_name": s, "file_sha256": f} for s, f in sorted(changed)],
                                               schema=gone.schema).to_arrow())
        state_changed = {t for t in STAGED_TABLES if con.execute(
            f'select exists (select 1 from raw."{t}" as t semi join __changed as c '
            'on t.source_name = c.source_name and t.file_sha256 = c.file_sha256)').fetchall()[0][0]}
        con.unregister("__changed")
    _frame_table(con, "loaded_files", [{"load_key": k, "source_name": o.source_name, "file_sha256": o.file_sha256}
                                       for k, o in wanted.items()], LOADED_FILES_SCHEMA)
    _frame_table(con, "file_changes",
                 [{"source_name": o.source_name, "file_sha256": o.file_sha256, "change": "added"} for o in added]
                 + [{"source_name": s, "file_sha256": f, "change": "removed"} for s, f in removed]
                 + [{"source_name": s, "file_sha256": f, "change": "state"} for s, f in sorted(changed)],
                 FILE_CHANGES_SCHEMA)
    # getattr, not asdict: asdict deep-copies every field of thousands of outcomes (0.2-0.4 s a refresh).
    _frame_table(con, "ingest_manifest", [{k: getattr(o, k) for k in MANIFEST_SCHEMA} for o in outcomes],
                 MANIFEST_SCHEMA)
    _frame_table(con, "file_versions", [{k: r[k] for k in FILE_VERSIONS_SCHEMA} for r in file_versions],
                 FILE_VERSIONS_SCHEMA)
    con.execute("create or replace table raw.workloads as select * from read_parquet(?)", [str(workloads_parquet)])
    con.execute("create or replace table raw.refresh as select ?::timestamptz as refreshed_at", [refreshed_at])
    # Which build of this warehouse this is (1 for a full one): the history models stamp the rows they
    # append with it, so a later model finds this build's rows by a number that only grows, and
    # DuckDB's zone maps skip every older row group (the file hashes that name them are random).
    previous = con.execute("select build_number from raw.build").fetchone()[0] if incremental else 0
    con.execute("create or replace table raw.build as select ?::bigint as build_number, ?::varchar as started_from",
                [previous + 1, started_from])
    # Which code and reference data built this warehouse (can_load_incrementally reads it).
    con.execute("create or replace table raw.build_fingerprint as select ?::varchar as fingerprint", [fingerprint])
    return {"files_added": len(added), "files_removed": len(removed), "files_state_changed": len(changed),
            "tables_changed": ({t for t, n in moved.items() if n} | state_changed) if incremental else set(STAGED_TABLES)}

"""The ingest's floor: work any build of this pipeline must do on the bench's files, each part measured apart.

Beside the anchor (DuckDB loading the files into tables) the bench sets what the pipeline cannot skip
however its parsing is written:
- keep the bytes: hash every input file (sha256 names its content) and copy it into a store;
- read every input cell (timed as DuckDB, the fastest reader here, reading the same files, nothing stored);
- check every accepted row against its pandera contract (the staged rows, in the pipeline's batches);
- write the canonical rows into the warehouse once (DuckDB from the staged Parquet, in any row order).
Their sum says how close to the anchor an ingest with these parts could come (docs/benchmark.md,
"The ingest's floor").
"""
import hashlib
import multiprocessing
import shutil
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from bench.baselines import REQUESTS_SELECT, shared_header
from bench.timing import cpu_seconds

class _Timer:
    """Wall and CPU seconds (this process and its children) of what runs inside `with`."""

    def __enter__(self):
        self._wall, self._cpu = time.perf_counter(), cpu_seconds()
        return self

    def __exit__(self, *exc):
        self.seconds, self.cpu_seconds = time.perf_counter() - self._wall, cpu_seconds() - self._cpu

    def result(self, **more) -> dict:
        return {"seconds": round(self.seconds, 3), "cpu_seconds": round(self.cpu_seconds, 3), **more}


def keep_bytes(paths: list[str]) -> dict:
    """sha256 of every file and a copy of it in a scratch store (what landing must do at least)."""
    store = Path(tempfile.mkdtemp(prefix="provider-eval-floor-"))
    try:
        with _Timer() as timer:
            for i, path in enumerate(paths):
                with open(path, "rb") as fh:
                    hashlib.file_digest(fh, "sha256")
                shutil.copyfile(path, store / str(i))
        return timer.result(files=len(paths))
    finally:
        shutil.rmtree(store, ignore_errors=True)


def read_cells(files: dict[str, list[str]], json_files: list[str]) -> dict:
    """DuckDB reading every cell of these files (each column hashed, nothing stored)."""
    import duckdb

    with _Timer() as timer, duckdb.connect() as con:
        for paths in files.values():
            option = "" if shared_header(paths) else ", union_by_name = true"
            con.execute(f"select bit_xor(hash(columns(*))) from read_csv(?, header = true{option})", [paths]).fetchall()
        if json_files:
            con.execute(f"select bit_xor(hash(columns(*))) from ({REQUESTS_SELECT})", [json_files]).fetchall()
    return timer.result()


def check_contracts(staged_dir: Path) -> dict:
    """pandera checking every staged accepted row against its table's contract, as many files a call as
    staging batches (reading the Parquet is not counted)."""
    import polars as pl

    from flows.stage_inputs import MAX_FILES_PER_BATCH
    from models import CONTRACTS

    seconds = cpu = 0.0
    rows = 0
    for table, contract in CONTRACTS.items():
        paths = sorted(staged_dir.rglob(f"*.{table}.parquet"))
        for i in range(0, len(paths), MAX_FILES_PER_BATCH):
            frame = pl.concat([pl.read_parquet(p) for p in paths[i:i + MAX_FILES_PER_BATCH]], how="vertical")
            with _Timer() as timer:
                contract.validate(frame, lazy=True)
            seconds, cpu, rows = seconds + timer.seconds, cpu + timer.cpu_seconds, rows + frame.height
    return {"seconds": round(seconds, 3), "cpu_seconds": round(cpu, 3), "rows": rows}


def write_tables(staged_dir: Path, db: Path) -> dict:
    """DuckDB writing every staged row into tables of a new database file, once, in any order."""
    import duckdb

    from flows.load import STAGED_TABLES

    with _Timer() as timer, duckdb.connect(str(db)) as con:
        con.execute("set preserve_insertion_order = false")
        for table in STAGED_TABLES:
            paths = [str(p) for p in sorted(staged_dir.rglob(f"*.{table}.parquet"))]
            if paths:
                con.execute(f'create table "{table}" as select * from read_parquet(?, union_by_name = true)', [paths])
        con.execute("checkpoint")
    db.unlink(missing_ok=True)
    return timer.result()


def _measure(files: dict[str, list[str]], json_files: list[str], staged_dir: Path, db: Path) -> dict:
    parts = {"keep_bytes": keep_bytes([p for paths in files.values() for p in paths] + json_files),
             "read_cells": read_cells(files, json_files),
             "contracts": check_contracts(staged_dir),
             "write_tables": write_tables(staged_dir, db)}
    return {"seconds": round(sum(p["seconds"] for p in parts.values()), 3),
            "cpu_seconds": round(sum(p["cpu_seconds"] for p in parts.values()), 3), **parts}


def ingest_floor(files: dict[str, list[str]], json_files: list[str], staged_dir: Path, db: Path) -> dict:
    """The floor's parts and their sum, measured in a process of its own (nothing they allocate stays in the bench's)."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_measure, files, json_files, staged_dir, db).result()

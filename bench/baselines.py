"""The bench's anchors: DuckDB alone reading the same generated files into a new database file."""
import csv
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from bench.timing import cpu_seconds

# DuckDB alone, per-request rows: the --save-detailed lists of every file unnested into one row per request.
REQUESTS_SELECT = """
select filename, unnest(input_lens) as input_len, unnest(output_lens) as output_len, unnest(ttfts) as ttft_s,
       unnest(latencies) as latency_s, unnest(errors) as error
from read_json(?, format = 'auto', filename = true, maximum_object_size = 67108864)
"""
REQUESTS_BASELINE = f"create table requests as {REQUESTS_SELECT}"


def shared_header(paths: list[str]) -> bool:
    """Whether every CSV file starts with the same header line (read from each file, not assumed)."""
    headers = set()
    for path in paths:
        with open(path, newline="", encoding="utf-8") as fh:
            headers.add(tuple(next(csv.reader(fh), [])))
    return len(headers) <= 1


def duckdb_baseline(files: dict[str, list[str]], json_files: list[str], db: Path,
                    plain: bool = False) -> tuple[float, dict]:
    """Seconds for DuckDB alone to read_csv / read_json the same files into tables of a new database file,
    the seconds of each table's statement (the final checkpoint is in the total only) and the CPU seconds.

    plain: the fastest correct load: a plain positional read_csv of the files of a table whose
    headers all agree (checked by reading each header), union_by_name only where they do not;
    `read_csv_modes` says which each table got. Otherwise union_by_name everywhere (the first anchor)."""
    import duckdb

    start, cpu_start, parts, modes = time.perf_counter(), cpu_seconds(), {}, {}
    with duckdb.connect(str(db)) as con:
        for table, paths in files.items():
            t = time.perf_counter()
            by_position = plain and shared_header(paths)
            modes[table] = "plain" if by_position else "union_by_name"
            option = "" if by_position else ", union_by_name = true"
            con.execute(f'create table "{table}" as select * from read_csv(?, header = true{option})', [paths])
            parts[table] = round(time.perf_counter() - t, 3)
        if json_files:
            t = time.perf_counter()
            con.execute(REQUESTS_BASELINE, [json_files])
            parts["requests"] = round(time.perf_counter() - t, 3)
        con.execute("checkpoint")
    parts["cpu_seconds"] = round(cpu_seconds() - cpu_start, 3)
    if plain:
        parts["read_csv_modes"] = modes
    return time.perf_counter() - start, parts


def duckdb_baseline_apart(files: dict[str, list[str]], json_files: list[str], db: Path,
                          plain: bool = False) -> tuple[float, dict]:
    """duckdb_baseline in a process of its own (timed there, as before): what DuckDB allocates for the
    anchor is never left in the bench process, whose RSS the later refreshes sample."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(duckdb_baseline, files, json_files, db, plain).result()

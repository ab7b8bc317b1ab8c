"""Prove two warehouses hold the same public tables: rows only in one or the other (`EXCEPT ALL` both ways), table by table.

    python -m bench.compare_warehouses OLD.duckdb NEW.duckdb
    python -m bench.compare_warehouses --checkout OLD_CHECKOUT [--sources FILE] [--workloads FILE]

The second form refreshes the same sources (default: this checkout's data/sources.yaml) twice,
with the old checkout's code and with this one, on one landing store (so both see the same
landing times), then compares.

Columns that hold a refresh's own clock (when it ran, when a file was first landed) differ between
two refreshes of the same inputs and are left out; every other column is compared, rows with
their multiplicity. Exit status 0 when every table matches, 1 otherwise.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb

from flows.refresh import PUBLIC_TABLES

# Values taken from the clock (or the refresh count) of the refresh that built the warehouse, not
# from its inputs.
CLOCK_COLUMNS = {"refreshed_at", "last_seen_at", "reads"}


def columns(con: duckdb.DuckDBPyConnection, catalog: str, table: str) -> list[str]:
    """The table's columns in order, as the public name in `main` shows them."""
    return [r[0] for r in con.execute(
        "select column_name from information_schema.columns where table_catalog = ? and table_name = ? "
        "and table_schema = 'main' order by ordinal_position", [catalog, table]).fetchall()]


COMPARE_MEMORY_LIMIT = "3GB"

# Rows only in old and only in new, duplicates counted: what `a EXCEPT ALL b` and `b EXCEPT ALL a`
# count, from one grouped pass over both sides (each row's count in old minus its count in new)
# instead of two set operations: 35 s instead of 165 s at SCALE=default. GROUP BY, like EXCEPT,
# takes NULLs as equal; tests/project/test_bench.py checks both agree.
DIFFERENCE_SQL = """
select coalesce(sum(greatest(surplus, 0)), 0), coalesce(sum(greatest(-surplus, 0)), 0)
from (select sum(side) as surplus
      from (select {cols}, 1 as side from old_w.main.{table}
            union all
            select {cols}, -1 as side from new_w.main.{table})
      group by {cols}
      having sum(side) <> 0)
"""


def compare(old: str, new: str, tables=PUBLIC_TABLES, ignore=CLOCK_COLUMNS) -> dict[str, tuple[int, int]]:
    """Per table: (rows only in old, rows only in new); a table missing on one side counts as -1."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="compare-spill-") as spill, duckdb.connect() as con:
        # Bounded: without a limit the grouping held 11 GB at SCALE=default; with 3 GB, as fast.
        con.execute(f"set memory_limit = '{COMPARE_MEMORY_LIMIT}'")
        con.execute(f"set temp_directory = '{spill}'")
        con.execute("set TimeZone = 'UTC'")
        con.execute(f"attach '{old}' as old_w (read_only)")
        con.execute(f"attach '{new}' as new_w (read_only)")
        for table in tables:
            old_cols, new_cols = columns(con, "old_w", table), columns(con, "new_w", table)
            if not old_cols or not new_cols or old_cols != new_cols:
                out[table] = (-1, -1)
                continue
            cols = ", ".join(f'"{c}"' for c in old_cols if c not in ignore)
            only_old, only_new = con.execute(DIFFERENCE_SQL.format(cols=cols, table=table)).fetchone()
            out[table] = (int(only_old), int(only_new))
    return out


def refresh_with(checkout: Path, sources: Path, workloads: Path, warehouse: Path) -> None:
    """`provider-eval refresh` of sources with the code of checkout (its own interpreter path)."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    subprocess.run([sys.executable, "-m", "provider_eval", "refresh", "--sources", str(sources),
                    "--workloads", str(workloads), "--warehouse", str(warehouse)], cwd=checkout, env=env, check=True)


def build_pair(old_checkout: Path, sources: Path, workloads: Path, work: Path) -> tuple[Path, Path]:
    """Both warehouses of the same inputs: old code first, then this code on a copy of its landing store."""
    old, new = work / "old" / "w.duckdb", work / "new" / "w.duckdb"
    refresh_with(old_checkout, sources, workloads, old)
    # The landing index keeps first-seen times; the per-warehouse read counts start afresh.
    shutil.copytree(old.parent / "landing", new.parent / "landing",
                    ignore=shutil.ignore_patterns("versions.*.json"))
    refresh_with(Path(__file__).resolve().parents[1], sources, workloads, new)
    return old, new


def main(argv=None) -> int:
    """Print one line per public table and exit 0 when all are identical."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", nargs="?")
    parser.add_argument("new", nargs="?")
    parser.add_argument("--checkout", type=Path, help="an older checkout to compare this code against")
    parser.add_argument("--sources", type=Path, default=Path(__file__).resolve().parents[1] / "data" / "sources.yaml")
    parser.add_argument("--workloads", type=Path, default=Path(__file__).resolve().parents[1] / "data" / "workloads.yaml")
    args = parser.parse_args(argv)
    if args.checkout:
        old, new = build_pair(args.checkout.resolve(), args.sources.resolve(), args.workloads.resolve(), Path(tempfile.mkdtemp(prefix="compare-")))
    elif args.old and args.new:
        old, new = args.old, args.new
    else:
        parser.error("give OLD NEW warehouse files, or --checkout")
    result = compare(str(old), str(new))
    for table, (only_old, only_new) in result.items():
        state = "identical" if (only_old, only_new) == (0, 0) else (
            "columns differ" if only_old < 0 else f"{only_old} row(s) only in old, {only_new} only in new")
        print(f"{table:24} {state}")
    return 0 if all(v == (0, 0) for v in result.values()) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Which raw/ref tables an incremental build changed, by content, so dbt runs only what they reach.

The staged tables (raw.quote_observations, …, filled file by file) are changed when load_staged
moved rows in them (its `tables_changed`). Every other raw/ref table is rebuilt whole by each load
and is compared here: a content hash of the copy before loading against the one after. Two of them
change every refresh, the clock and the files' reads: `settled` asks whether they decide anything new.
"""
import duckdb

from flows.load import STAGED_TABLES

# Not inputs that change results: they name what this build changed (and which build it is) for the
# incremental models, which filter their own table's rows by them. A model whose table did not change
# would find none of its rows named there (its staged table counts as changed otherwise), so its run
# is a no-op.
NOT_AN_INPUT = {"raw.file_changes", "raw.build"}
_STAGED = {f"raw.{t}" for t in STAGED_TABLES}


def content_hashes(con: duckdb.DuckDBPyConnection) -> dict[str, tuple]:
    """Per raw/ref table load_staged does not fill file by file: its columns and types, its row count,
    and two sums of each row's md5 halves (order-insensitive; a duplicated row counts twice)."""
    columns = con.execute(
        "select table_schema || '.' || table_name, string_agg(column_name || ' ' || data_type, ', ' "
        "order by ordinal_position) from information_schema.columns where table_catalog = current_database() "
        "and table_schema in ('raw', 'ref') group by all").fetchall()
    out = {}
    for name, cols in columns:
        if name in _STAGED:
            continue
        schema, table = name.split(".", 1)
        # to_json quotes strings and writes null as null: no two rows print the same.
        out[name] = (cols, *con.execute(
            "select count(*), coalesce(sum(md5_number_lower(j)), 0), coalesce(sum(md5_number_upper(j)), 0) "
            f'from (select to_json(t)::varchar as j from {schema}."{table}" as t)').fetchall()[0])
    return out


def changed_inputs(before: dict[str, tuple], after: dict[str, tuple], staged_changed: set[str]) -> set[str]:
    """The raw/ref tables ("raw.workloads", …) whose content this build changed: the staged ones
    load_staged moved rows in, every other one whose hash differs (or that is new or gone)."""
    rebuilt = {t for t in before.keys() | after.keys() if before.get(t) != after.get(t)}
    return ((rebuilt - _STAGED) | {f"raw.{t}" for t in staged_changed}) - NOT_AN_INPUT


def settled(con: duckdb.DuckDBPyConnection, changed: set[str]) -> tuple[set[str], bool]:
    """The changed inputs less the clock when it changes no kept row, and whether the reads flag no option.

    raw.refresh (the clock) and raw.file_versions (each file's reads and last-seen time) change every
    refresh; what they decide (quote flags and ages, is_not_listed) is stored in the tables an
    incremental build keeps. The view intermediate.int_refresh_moves compares those rows with what
    this refresh's clock and reads say. When new quotes were loaded, their models run anyway and
    read both: the view is not asked.
    """
    if "raw.quote_observations" in changed or not changed & {"raw.refresh", "raw.file_versions"}:
        return changed, False
    try:
        clock_moves, reads_move = con.execute(
            "select clock_moves, reads_move from intermediate.int_refresh_moves").fetchone()
    except duckdb.CatalogException:  # a copy without the view (dropped by hand): both count as moved
        return changed, False
    return (changed if clock_moves else changed - {"raw.refresh"}), not reads_move

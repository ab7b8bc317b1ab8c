"""The bench's read-side timings on the published warehouse: the rank query, the rank command, feasibility."""
import statistics
import time
from pathlib import Path


def p50_ms(fn, repeats: int) -> float:
    """Median wall time of fn() in milliseconds (after one warm-up call)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 3)


def rank_query_p50(published: Path, workload_id: str, repeats: int) -> dict:
    """p50 ms of the rankings queries `provider-eval rank --workload W` runs (no other filter),
    read-only: the table's (the first TABLE_ROWS_SHOWN rows, the rest counted) and the export's
    (--format csv|json: every ranked row and column)."""
    from provider_eval import output, warehouse
    from provider_eval.cli.rank import RANK_COLUMNS, RANK_FILTERS, TABLE_SELECT

    export = f"select {', '.join(RANK_COLUMNS)} from rankings where {RANK_FILTERS} order by workload_id, rank"
    # The filters' parameters, in order: workload, top, billing, no_spot, provider, gpu, validated_only,
    # max_quote_age, vendor (and the table's row limit).
    params = [workload_id, None, None, False, None, None, False, None, None]
    with warehouse.connect_published(published) as con:
        return {"table": p50_ms(lambda: con.execute(TABLE_SELECT, params + [output.TABLE_ROWS_SHOWN]).fetchall(), repeats),
                "export": p50_ms(lambda: con.execute(export, params).fetchall(), repeats)}


def cli_rank_p50(published: Path, workload_id: str, repeats: int) -> float:
    """`provider-eval rank --workload W` as a command (in-process: interpreter start-up excluded)."""
    from typer.testing import CliRunner

    from provider_eval.cli import app

    runner = CliRunner()

    def once():
        result = runner.invoke(app, ["rank", "--workload", workload_id, "--warehouse", str(published)])
        if result.exit_code != 0:
            raise RuntimeError(f"provider-eval rank failed: {result.output}")
    return p50_ms(once, repeats)


def feasibility_seconds(published: Path, repeats: int) -> tuple[float, dict]:
    """Median seconds to recompute memory_fit + compat over every workload × configuration of the warehouse."""
    import duckdb

    from provider_eval import sql_compiled
    from provider_eval.paths import SQL_DIR

    sql_models = sql_compiled.compiled_models(SQL_DIR)
    inputs = {"int_fit_requests", "int_compat_requests"}
    chain = sql_compiled.upstream(sql_models, "int_memory_fit", inputs) + \
        sql_compiled.upstream(sql_models, "int_compat_checks", inputs)
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        con.execute(f"attach '{published}' as published (read_only)")
        sql_compiled.create_schemas(con)
        # The chain's tables are built in memory; what it reads (sources, the two input tables) are
        # views of the published warehouse under the same schema-qualified names.
        built = {m.name for m in chain}
        for schema, table in con.execute(
                "select table_schema, table_name from information_schema.tables "
                "where table_catalog = 'published' and table_schema in ('raw', 'ref', 'staging', 'intermediate')").fetchall():
            if table not in built:
                con.execute(f'create view memory.{schema}."{table}" as select * from published.{schema}."{table}"')
        counts = {t: con.execute(f"select count(*) from published.intermediate.{t}").fetchone()[0] for t in inputs}
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            sql_compiled.build(con, chain)
            times.append(time.perf_counter() - start)
    return round(statistics.median(times), 4), counts

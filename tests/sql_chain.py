"""Run the SQL models between a few given input tables and a wanted result, in memory, on tiny rows.

The chain of models comes from dbt's manifest (sql_compiled.upstream: a model added to the chain is
built too), and every table keeps the columns and types of the real warehouse: one empty warehouse
per test session (the loaders' raw and ref tables from no files, every model built on them) gives
the given tables' types and the reference data. A test row may leave columns out: they are NULL.
"""
import atexit
import functools
import shutil
import tempfile
from decimal import Decimal
from pathlib import Path

import duckdb

from provider_eval import sql_compiled, warehouse
from provider_eval.paths import DEFAULT_WORKLOADS, REFERENCE_DIR, SQL_DIR

# When the refresh runs (quote ages are counted to it): two weeks after the test offers' observed_at.
REFRESHED_AT = "2026-11-15 00:00:00+00"
# The schemas loaders write: every table in them is a source the models may read.
SOURCE_SCHEMAS = ("raw", "ref")
# The cost model's results: build() builds everything they need that the test does not give.
COST_MODEL = ("workload_costs", "rankings", "estimate_rankings", "ranking_sensitivity")
# Unqualified names in a test's SQL resolve through the layers (model names are unique in dbt).
SEARCH_PATH = "marts,intermediate,staging"
# How a test's own tables are marked, so a later rebuild() knows not to build them from sources.
GIVEN = "given by the test"

GRANULARITY_S = {"second": 1, "minute": 60, "hour": 3600, "month": 730 * 3600}
HOURS_PER_UNIT = {"second": Decimal(1) / 3600, "minute": Decimal(1) / 60, "hour": Decimal(1), "month": Decimal(730)}


@functools.cache
def models() -> dict[str, sql_compiled.CompiledModel]:
    """Every model's compiled SQL (dbt's manifest, cached per version of sql/)."""
    return sql_compiled.compiled_models(SQL_DIR)


@functools.cache
def _sources_read() -> dict[str, tuple[tuple[str, str], ...]]:
    """The (schema, table) of every source each model reads, from dbt's manifest."""
    manifest = sql_compiled.compile_manifest(SQL_DIR)
    sources = {uid: (s["schema"], s["identifier"]) for uid, s in manifest["sources"].items()}
    return {n["name"]: tuple(sources[d] for d in n["depends_on"]["nodes"] if d in sources)
            for n in manifest["nodes"].values() if n["resource_type"] == "model"}


def in_order(targets, given=frozenset()) -> list[sql_compiled.CompiledModel]:
    """The models the targets need, in build order, not going past the given tables."""
    chain = {}
    for target in targets:
        for model in sql_compiled.upstream(models(), target, set(given)):
            chain.setdefault(model.name, model)
    return list(chain.values())


@functools.cache
def empty_warehouse() -> Path:
    """One warehouse file per test session: the loaders' tables from no files, then every model on them."""
    from flows.ingest.workloads import load_workloads
    from flows.load import load_reference, load_staged

    work = Path(tempfile.mkdtemp(prefix="provider-eval-empty-warehouse-"))
    atexit.register(shutil.rmtree, work, True)
    # raw.workloads with the loader's columns and no row (the bundled file only gives the shape).
    workloads = work / "workloads.parquet"
    load_workloads(DEFAULT_WORKLOADS).clear().write_parquet(workloads)
    path = work / "warehouse.duckdb"
    with warehouse.connect(path) as con:
        load_reference(con, REFERENCE_DIR)
        load_staged(con, [], workloads, REFRESHED_AT)
        sql_compiled.create_schemas(con)
        sql_compiled.build(con, in_order(list(models())))
    return path


def table(name: str) -> str:
    """A model's table as schema-qualified SQL (for a test that replaces one)."""
    return f'{models()[name].schema}."{name}"'


def chain(given: dict[str, list[dict]], targets) -> duckdb.DuckDBPyConnection:
    """An in-memory warehouse: the sources, the given model tables with these rows, and the targets built on them."""
    to_build = in_order(targets, given)
    read = {d for m in to_build for d in m.depends_on}
    unread = [name for name, rows in given.items() if rows and name not in read]
    assert not unread, f"given {unread} but no model between them and {list(targets)} reads them"
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    sql_compiled.create_schemas(con)
    con.execute("attach ? as empty (read_only)", [str(empty_warehouse())])
    # Only the sources the chain reads: copying all of them would be a third of a small test's time.
    for schema, name in sorted({s for m in to_build for s in _sources_read()[m.name]}):
        con.execute(f'create table {schema}."{name}" as select * from empty.{schema}."{name}"')
    for name, rows in given.items():
        con.execute(f"create table {table(name)} as select * from empty.{table(name)} limit 0")
        con.execute(f"comment on table {table(name)} is '{GIVEN}'")
        _insert(con, name, rows)
    con.execute("detach empty")
    sql_compiled.build(con, to_build)
    con.execute(f"set search_path = '{SEARCH_PATH}'")
    return con


OPTION_KEYS = {
    "offer_option_id": "source_name, provider, offer_id, billing_model, tier, commitment_term_hours::varchar",
    "cross_source_option_id": "provider, gpu_model, gpus_per_node::varchar, billing_model, tier, commitment_term_hours::varchar",
}


def _insert(con: duckdb.DuckDBPyConnection, name: str, rows: list[dict]) -> None:
    """Insert test rows by column name; a column the real model does not have is a mistake in the test."""
    columns = {r[0] for r in con.execute(f"describe {table(name)}").fetchall()}
    for row in rows:
        unknown = set(row) - columns
        assert not unknown, f"{name}: unknown test columns {unknown}"
        con.execute(f"insert into {table(name)} by name select {', '.join(f'$v{i} as {c}' for i, c in enumerate(row))}",
                    {f"v{i}": v for i, v in enumerate(row.values())})
    # Offer rows get the option keys stg_quote_observations gives every option (its formula).
    for key, parts in OPTION_KEYS.items():
        if key in columns:
            con.execute(f"update {table(name)} set {key} = md5(to_json([{parts}])) where {key} is null")


def rebuild(con: duckdb.DuckDBPyConnection, targets, replaced=()) -> None:
    """Build the targets again on con after the test replaced some tables (these stay as the test left them)."""
    given = {r[0] for r in con.execute("select table_name from duckdb_tables() where database_name = current_database() "
                                       "and comment = ?", [GIVEN]).fetchall()}
    sql_compiled.build(con, in_order(targets, given | set(replaced)))


def build(workloads=(), offers=(), runs=(), memory=(), compat=(), validations=(),
          bench_runs=None, targets=COST_MODEL) -> duckdb.DuckDBPyConnection:
    """An in-memory warehouse holding these inputs plus the cost model built over them.

    With bench_runs (stg_benchmark_runs rows), throughput comes from the real matching models instead of `runs`."""
    given = {"stg_workloads": workloads, "int_offers": offers, "int_memory_fit": memory, "int_compat_checks": compat,
             "int_latest_validations": validations}
    if bench_runs is not None:
        given["stg_benchmark_runs"] = bench_runs
    else:
        given["int_workload_throughput"] = runs
    return chain({k: list(v) for k, v in given.items()}, targets)


def workload(workload_id="w", quantity=1, unit="jobs", kind="batch_job", **extra) -> dict:
    """A stg_workloads row with the defaults of workloads.yaml."""
    return {"workload_id": workload_id, "kind": kind, "unit": unit, "quantity": Decimal(str(quantity)),
            "storage_gb": 0, "egress_gb": 0, "setup_hours": 0, "utilisation": 1,
            "benchmark_workload_id": workload_id, "shape_tolerance_pct": 10.0, **extra}


def bench_run(run_id, gpu_model="MI300X", gpu_count=1, output_tokens_per_s=1000.0, **extra) -> dict:
    """A stg_benchmark_runs row measuring output tokens (its rates whole-system per second)."""
    return {"run_id": run_id, "gpu_model": gpu_model, "gpu_count": gpu_count, "unit": "requests",
            "output_tokens_per_s": output_tokens_per_s, "source_name": "b", "file_sha256": "f", **extra}


def offer(offer_id, gpu_model="MI300X", price=Decimal("2"), gpus_per_node=1, price_scope="per_node",
          price_unit="hour", billing_model="on_demand", billing_granularity="hour", provider="p", **extra) -> dict:
    """An offers row in USD, normalised the way stg_quote_observations does it."""
    price = Decimal(str(price))
    per_hour = price / HOURS_PER_UNIT[price_unit]
    node = per_hour if price_scope == "per_node" else per_hour * gpus_per_node
    row = {"offer_id": offer_id, "provider": provider, "gpu_model": gpu_model, "gpus_per_node": gpus_per_node,
           "billing_model": billing_model, "usd_per_node_hour": round(node, 6),
           "usd_per_gpu_hour": round(node / gpus_per_node, 6), "price_amount": price, "currency": "USD",
           "price_unit": price_unit, "price_scope": price_scope, "billing_granularity": billing_granularity,
           "billing_granularity_s": GRANULARITY_S[billing_granularity], "min_term_hours": 0,
           "storage_usd_per_gb_month": 0, "egress_usd_per_gb": 0, "licence_usd_per_hour": 0, "setup_fee_usd": 0,
           "support_usd_per_month": 0, "observed_at": "2026-11-01 00:00:00+00", "observed_at_basis": "row", "is_stale": False,
           "source_name": "s", "fx_rate_date": "1970-01-01", "vendor": _vendor(gpu_model)}
    row.update(extra)
    return row


@functools.cache
def _vendors() -> dict[str, str]:
    import csv

    with open(REFERENCE_DIR / "gpus.csv", encoding="utf-8") as f:
        return {r["gpu_model"]: r["vendor"] for r in csv.DictReader(f)}


def _vendor(gpu_model: str) -> str | None:
    """The catalog's vendor of a GPU model (offers.vendor), as the offers mart joins it."""
    return _vendors().get(gpu_model)


def run(workload_id="w", gpu_model="MI300X", units_per_hour=1.0, gpu_count=1, run_provider=None, run_id=None) -> dict:
    """An int_workload_throughput row (median throughput of matching runs)."""
    return {"workload_id": workload_id, "run_provider": run_provider, "gpu_model": gpu_model, "gpu_count": gpu_count,
            "units_per_hour": units_per_hour, "benchmark_runs": 1,
            "benchmark_run_ids": [run_id or f"run-{gpu_model}-{gpu_count}"]}


def rows(con, sql, params=None) -> list[dict]:
    """Query results as dicts."""
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]

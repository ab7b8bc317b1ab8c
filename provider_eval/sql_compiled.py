"""The dbt models as compiled SQL (from dbt's manifest), run on any DuckDB connection in graph order.

check-fit and check-compat answer from the same model definitions as the refresh, on a few input
rows in memory, without dbt's start-up per call: the project is compiled once per version of
sql/ (and of dbt) and the manifest is kept in a cache.
"""
import shutil
import tempfile
from dataclasses import dataclass
from graphlib import TopologicalSorter
from pathlib import Path

import duckdb

from provider_eval import dbt_cache, sql_layer
from provider_eval.dbt_cache import tree_hash  # noqa: F401  (what dbt_docs_site stamps its site with)
from provider_eval.errors import SqlModelError

SCHEMAS = ("raw", "ref", "staging", "intermediate", "marts")


@dataclass(frozen=True)
class CompiledModel:
    """One model: its name, the schema it lives in, its compiled select and the models it reads."""

    name: str
    schema: str
    sql: str
    depends_on: tuple[str, ...]
    ephemeral: bool = False  # inlined into its readers' SQL as a CTE, never a table


def compile_manifest(sql_dir: Path) -> dict:
    """dbt's manifest with every model's compiled SQL, from the cache or compiled now (~5 s, once)."""
    kept = dbt_cache.compiled_path(sql_dir)
    if kept.exists():
        return sql_layer.read_manifest(kept.parent)
    work = Path(tempfile.mkdtemp(prefix="provider-eval-compile-"))
    try:
        sql_layer.write_profile(work, Path(":memory:"), "1GB", None)
        manifest = sql_layer.parsed(sql_dir, work, ":memory:")
        result = sql_layer.invoke("compile", sql_dir, work, ["--select", "resource_type:model", "resource_type:test"],
                                  manifest=manifest)
        if not result.success:
            raise SqlModelError(f"dbt could not compile {sql_dir}: {result.exception or 'see its log'}")
        compiled = work / "target" / "manifest.json"
        return sql_layer.read_manifest(dbt_cache.keep_compiled(sql_dir, lambda path: shutil.copy2(compiled, path)).parent)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def keep_manifest(target_dir: Path, sql_dir: Path) -> None:
    """Cache the manifest a successful `dbt build` wrote into target_dir (its models are compiled), so
    check-fit after a refresh starts without compiling the project itself. (sql_layer.build keeps
    its own; this is for a build run with dbt's own manifest.json.)"""
    if (target_dir / "manifest.json").exists():
        dbt_cache.keep_compiled(sql_dir, lambda path: shutil.copy2(target_dir / "manifest.json", path))


def compiled_models(sql_dir: Path) -> dict[str, CompiledModel]:
    """Every model of the project by name, with its compiled SQL."""
    nodes = compile_manifest(sql_dir)["nodes"]
    by_id = {uid: n for uid, n in nodes.items() if n["resource_type"] == "model"}
    return {n["name"]: CompiledModel(n["name"], n["schema"], n["compiled_code"].strip().rstrip(";"),
                                     tuple(by_id[d]["name"] for d in n["depends_on"]["nodes"] if d in by_id),
                                     n["config"]["materialized"] == "ephemeral")
            for n in by_id.values()}


def compiled_checks(sql_dir: Path) -> dict[str, str]:
    """Every data test (sql/tests/*.sql and the generic ones) by name: a select of its offending rows."""
    nodes = compile_manifest(sql_dir)["nodes"]
    return {n["name"]: n["compiled_code"].strip().rstrip(";") for n in nodes.values() if n["resource_type"] == "test"}


def upstream(models: dict[str, CompiledModel], target: str, provided: set[str] = frozenset()) -> list[CompiledModel]:
    """The models `target` needs (itself included) in build order, not going past the provided ones."""
    needed, stack = {}, [target]
    while stack:
        name = stack.pop()
        if name in needed or name in provided:
            continue
        if name not in models:
            raise SqlModelError(f"no SQL model named {name}")
        needed[name] = models[name]
        stack.extend(models[name].depends_on)
    order = TopologicalSorter({n: [d for d in m.depends_on if d in needed] for n, m in needed.items()}).static_order()
    return [needed[n] for n in order]


def create_schemas(con: duckdb.DuckDBPyConnection) -> None:
    """The layers' schemas, on a connection that has none yet (an in-memory database)."""
    for schema in SCHEMAS:
        con.execute(f"create schema if not exists {schema}")


def build(con: duckdb.DuckDBPyConnection, models: list[CompiledModel]) -> None:
    """Create each model as a table in its schema, in the order given (ephemeral ones live in their readers)."""
    for model in (m for m in models if not m.ephemeral):
        try:
            con.execute(f'create or replace table {model.schema}."{model.name}" as\n{model.sql}')
        except duckdb.Error as exc:
            raise SqlModelError(f"SQL model {model.name} failed: {exc}") from None

"""Answer check-fit and check-compat with the refresh's own SQL models, run on a one-row input table."""
import re
from pathlib import Path

import duckdb

from flows.load import load_reference
from provider_eval import sql_models
from provider_eval.paths import REFERENCE_DIR, SQL_DIR

FIT_INPUT = "int_fit_requests"
FIT_RESULT = "int_memory_fit"
COMPAT_INPUT = "int_compat_requests"
COMPAT_RESULT = "int_compat_checks"

# The input tables' columns and types: the same shape the refresh builds from workloads and offers.
FIT_COLUMNS = {
    "workload_id": "varchar", "model_id": "varchar", "precision": "varchar", "kv_precision": "varchar",
    "context_tokens": "bigint", "concurrency": "bigint", "mode": "varchar", "engine": "varchar",
    "gpu_memory_utilization": "double", "activation_checkpointing": "boolean", "lora_rank": "bigint",
    "gpu_model": "varchar", "gpu_count": "integer",
}
COMPAT_COLUMNS = {
    "gpu_model": "varchar", "rocm_version": "varchar", "os": "varchar", "kernel": "varchar",
    "amdgpu_driver_version": "varchar", "torch_version": "varchar", "engine": "varchar",
}


def _upstream(models: dict[str, sql_models.SqlModel], target: str, provided: str) -> list[sql_models.SqlModel]:
    """The models `target` needs (itself included) in build order, stopping at the provided table."""
    needed, stack = {}, [target]
    while stack:
        name = stack.pop()
        if name in needed or name == provided or name not in models:
            continue
        needed[name] = models[name]
        code = sql_models._COMMENT.sub(" ", models[name].sql)
        stack.extend(n for n in models if n != name and re.search(rf"\b{re.escape(n)}\b", code))
    return sql_models.build_order(list(needed.values()))


def run(inputs: dict, input_table: str, columns: dict[str, str], result_table: str,
        sql_dir: Path = SQL_DIR, reference_dir: Path = REFERENCE_DIR) -> tuple[list[str], list[tuple]]:
    """Load reference data into memory, add the one-row input, build the result model and read it."""
    models = {m.name: m for m in sql_models.discover(sql_dir)}
    with duckdb.connect() as con:
        load_reference(con, reference_dir)
        cols = ", ".join(f"?::{t} as {c}" for c, t in columns.items())
        con.execute(f'create table "{input_table}" as select {cols}', [inputs.get(c) for c in columns])
        for model in _upstream(models, result_table, input_table):
            con.execute(f'create table "{model.name}" as\n{model.sql.strip().rstrip(";")}')
        cur = con.execute(f'select * from "{result_table}"')
        return [d[0] for d in cur.description], cur.fetchall()


def check_fit(request: dict, **kw) -> dict:
    """Memory fit of one model × precision × GPU × count, computed by int_memory_fit.sql."""
    cols, rows = run({"workload_id": "check-fit", **request}, FIT_INPUT, FIT_COLUMNS, FIT_RESULT, **kw)
    return dict(zip(cols, rows[0]))


def check_compat(request: dict, **kw) -> dict:
    """ROCm compatibility verdict of one stack, computed by int_compat_checks.sql."""
    cols, rows = run(request, COMPAT_INPUT, COMPAT_COLUMNS, COMPAT_RESULT, **kw)
    return dict(zip(cols, rows[0]))


def resolve_gpu(name: str, reference_dir: Path = REFERENCE_DIR) -> str | None:
    """The catalog name for a GPU spelling (gpu_aliases.csv, case- and space-insensitive), or None."""
    with duckdb.connect() as con:
        load_reference(con, reference_dir)
        row = con.execute(
            "select gpu_model from ("
            " select model as gpu_model, model as alias from ref_gpus"
            " union all select gpu_model, alias from ref_gpu_aliases)"
            " where lower(regexp_replace(trim(alias), '\\s+', ' ', 'g')) = lower(regexp_replace(trim(?), '\\s+', ' ', 'g'))"
            " limit 1", [name]).fetchone()
    return row[0] if row else None


def catalog(table: str, column: str, reference_dir: Path = REFERENCE_DIR) -> list[str]:
    """Every value of one column of a reference table (for usage messages)."""
    with duckdb.connect() as con:
        load_reference(con, reference_dir)
        return [r[0] for r in con.execute(f'select distinct "{column}" from "ref_{table}" order by 1').fetchall()]

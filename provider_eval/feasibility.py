"""Answer check-fit and check-compat with the refresh's own SQL models, run on a one-row input table."""
from dataclasses import dataclass
from pathlib import Path

import duckdb

from flows.ingest import names
from flows.load import load_empty, load_reference
from models.model_configs import ModelConfig
from provider_eval import sql_compiled
from provider_eval.paths import REFERENCE_DIR, SQL_DIR

FIT_INPUT = "int_fit_requests"
FIT_RESULT = "int_memory_fit"
COMPAT_INPUT = "int_compat_requests"
COMPAT_RESULT = "int_compat_checks"

# The input tables' columns and types: the same shape the refresh builds from workloads and offers.
FIT_COLUMNS = {
    "workload_id": "varchar", "model_id": "varchar", "precision": "varchar", "kv_precision": "varchar",
    "context_tokens": "bigint", "concurrency": "bigint", "mode": "varchar", "engine": "varchar",
    "gpu_memory_utilization": "double", "activation_checkpointing": "varchar", "lora_rank": "bigint",
    "gpu_model": "varchar", "gpu_count": "integer",
}
COMPAT_COLUMNS = {
    "gpu_model": "varchar", "rocm_version": "varchar", "os": "varchar", "kernel": "varchar",
    "amdgpu_driver_version": "varchar", "torch_version": "varchar", "engine": "varchar",
}


def run(inputs: list[dict], input_table: str, columns: dict[str, str], result_table: str,
        sql_dir: Path = SQL_DIR, reference_dir: Path = REFERENCE_DIR) -> tuple[list[str], list[tuple]]:
    """Load reference data into memory, add the input rows, build the result SQL model and read it."""
    sql_models = sql_compiled.compiled_models(sql_dir)
    chain = sql_compiled.upstream(sql_models, result_table, {input_table})
    with duckdb.connect() as con:
        sql_compiled.create_schemas(con)
        load_reference(con, reference_dir)
        # One-row checks run on the bundled catalog alone: no model-config source is declared.
        load_empty(con, "model_configs", ModelConfig)
        table = f'{sql_models[input_table].schema}."{input_table}"'
        con.execute(f"create table {table} (" + ", ".join(f"{c} {t}" for c, t in columns.items()) + ")")
        con.executemany(f"insert into {table} values (" + ", ".join("?" for _ in columns) + ")",
                        [[row.get(c) for c in columns] for row in inputs])
        sql_compiled.build(con, chain)
        cur = con.execute(f'select * from {sql_models[result_table].schema}."{result_table}"')
        return [d[0] for d in cur.description], cur.fetchall()


def check_fit_many(requests: list[dict], **kw) -> list[dict]:
    """Memory fit of each LLM × precision × GPU × count, computed together by int_memory_fit.sql."""
    keyed = [{**r, "workload_id": f"request-{i}"} for i, r in enumerate(requests)]
    cols, rows = run(keyed, FIT_INPUT, FIT_COLUMNS, FIT_RESULT, **kw)
    by_id = {row[cols.index("workload_id")]: dict(zip(cols, row)) for row in rows}
    return [by_id[r["workload_id"]] for r in keyed]


def check_fit(request: dict, **kw) -> dict:
    """Memory fit of one LLM × precision × GPU × count, computed by int_memory_fit.sql."""
    return check_fit_many([request], **kw)[0]


def check_compat_many(requests: list[dict], **kw) -> list[dict]:
    """ROCm compatibility verdict of each stack, computed together by int_compat_checks.sql."""
    cols, rows = run(requests, COMPAT_INPUT, COMPAT_COLUMNS, COMPAT_RESULT, **kw)
    by_key = {tuple(row[cols.index(c)] for c in COMPAT_COLUMNS): dict(zip(cols, row)) for row in rows}
    return [by_key[tuple(r.get(c) for c in COMPAT_COLUMNS)] for r in requests]


def check_compat(request: dict, **kw) -> dict:
    """ROCm compatibility verdict of one stack, computed by int_compat_checks.sql."""
    return check_compat_many([request], **kw)[0]


@dataclass(frozen=True)
class Catalog:
    """What check-fit and check-compat accept: LLM model ids, precisions, GPU models and their aliases."""

    model_ids: list[str]
    precisions: list[str]
    gpu_models: list[str]
    reference_dir: Path = REFERENCE_DIR

    def resolve_gpu(self, name: str) -> str | None:
        """The catalog name for a GPU name by the ingest rules (flows/ingest/names.py), or None."""
        return names.resolve_gpu(name, self.reference_dir).gpu_model

    def gpu_problem(self, name: str) -> str | None:
        """Why a GPU name does not resolve (reason code: message), or None when it does."""
        got = names.resolve_gpu(name, self.reference_dir)
        return None if got.gpu_model else f"{got.reason_code}: {got.detail}"

    def resolve_model(self, name: str) -> str | None:
        """The catalog model_id for an LLM name or Hugging Face repo id (names.py rules), or None."""
        return names.resolve_model(name, self.reference_dir).model_id


def load_catalog(reference_dir: Path = REFERENCE_DIR) -> Catalog:
    """Read the reference tables the commands validate their arguments against, in one pass."""
    with duckdb.connect() as con:
        load_reference(con, reference_dir)
        def column(sql: str) -> list:
            return [r[0] for r in con.execute(sql).fetchall()]
        return Catalog(
            model_ids=column("select model_id from ref.llm_models order by 1"),
            precisions=column("select precision from ref.precisions order by 1"),
            gpu_models=column("select gpu_model from ref.gpus order by 1"),
            reference_dir=reference_dir,
        )

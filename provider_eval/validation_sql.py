"""validate-host's verdict from the warehouse's own SQL models, run on one evidence record in memory.

The record is parsed by the probe-json adapter the refresh lands it with, and int_validation_checks /
int_validation_verdicts are built on it from dbt's compiled SQL (as check-fit runs the fit models), so
what the CLI prints is what hardware_validations will say after the next refresh.
"""
from dataclasses import dataclass
from pathlib import Path

import duckdb

from flows.ingest.adapters import probe_json
from flows.ingest.adapters.base import FileContext
from flows.ingest.land import sha256_of
from flows.load import load_empty, load_reference
from models import CONTRACTS
from provider_eval import sql_compiled
from provider_eval.paths import REFERENCE_DIR, SQL_DIR

CHECKS, VERDICTS = "int_validation_checks", "int_validation_verdicts"
INPUTS = ("hardware_validations", "validation_gpus")


@dataclass(frozen=True)
class SqlVerdict:
    """The verdict of one validation and its checks, as the SQL models decided them."""

    verdict: str
    reasons: list[str]
    checks: list[dict]  # check_number, check_name, status, measured, expected, message, source_of_rule


def decide(record_path: Path, sql_dir: Path = SQL_DIR, reference_dir: Path = REFERENCE_DIR) -> SqlVerdict:
    """Parse one evidence record (and its raw probe output) and run the verdict models on it."""
    record_path = Path(record_path)
    companions = probe_json.companion_probe(record_path)
    ctx = FileContext(path=record_path, source_name="validate-host", original_name=record_path.name,
                      file_sha256=sha256_of(record_path), first_seen_at="", defaults={},
                      original_path=str(record_path), companions={str(p): str(p) for p in companions})
    parsed = probe_json.parse(ctx)
    if parsed.quarantined.height:
        raise ValueError(f"{record_path}: {parsed.quarantined['detail'][0]}")
    sql_models = sql_compiled.compiled_models(sql_dir)
    chain = {m.name: m for target in (CHECKS, VERDICTS) for m in sql_compiled.upstream(sql_models, target)}
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        sql_compiled.create_schemas(con)
        load_reference(con, reference_dir)
        for table in INPUTS:
            load_empty(con, table, CONTRACTS[table])
        frames = {"hardware_validations": parsed.accepted, "validation_gpus": parsed.details["validation_gpus"]}
        for table, frame in frames.items():
            con.register("__rows", frame.to_arrow())
            con.execute(f'insert into raw."{table}" by name select * from __rows')
            con.unregister("__rows")
        sql_compiled.build(con, list(chain.values()))
        verdict, reasons = con.execute(f'select verdict, reasons from {sql_models[VERDICTS].schema}."{VERDICTS}"').fetchone()
        cur = con.execute(f'select * exclude (validation_id) from {sql_models[CHECKS].schema}."{CHECKS}" order by check_number')
        cols = [d[0] for d in cur.description]
        return SqlVerdict(verdict, list(reasons), [dict(zip(cols, row)) for row in cur.fetchall()])

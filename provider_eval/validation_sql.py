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
    return decide_many([record_path], sql_dir, reference_dir)[0]


def _parse(record_path: Path):
    """One record landed as the refresh lands it (probe-json), or ValueError naming what is wrong."""
    companions = probe_json.companion_probe(record_path)
    ctx = FileContext(path=record_path, source_name="validate-host", original_name=record_path.name,
                      file_sha256=sha256_of(record_path), first_seen_at="", defaults={},
                      original_path=str(record_path), companions={str(p): str(p) for p in companions})
    parsed = probe_json.parse(ctx)
    if parsed.quarantined.height:
        raise ValueError(f"{record_path}: {parsed.quarantined['detail'][0]}")
    return parsed


def decide_many(record_paths: list[Path], sql_dir: Path = SQL_DIR, reference_dir: Path = REFERENCE_DIR) -> list[SqlVerdict]:
    """The verdict of each record, in order, from one build of the verdict models over all of them."""
    parsed = [_parse(Path(p)) for p in record_paths]
    ids = [p.accepted["validation_id"][0] for p in parsed]
    if len(set(ids)) != len(ids):
        raise ValueError("two records share a validation_id; decide them separately")
    sql_models = sql_compiled.compiled_models(sql_dir)
    chain = {m.name: m for target in (CHECKS, VERDICTS) for m in sql_compiled.upstream(sql_models, target)}
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        sql_compiled.create_schemas(con)
        load_reference(con, reference_dir)
        for table in INPUTS:
            load_empty(con, table, CONTRACTS[table])
        for one in parsed:
            frames = {"hardware_validations": one.accepted, "validation_gpus": one.details["validation_gpus"]}
            for table, frame in frames.items():
                con.register("__rows", frame.to_arrow())
                con.execute(f'insert into raw."{table}" by name select * from __rows')
                con.unregister("__rows")
        sql_compiled.build(con, list(chain.values()))
        verdicts = {v: (verdict, reasons) for v, verdict, reasons in con.execute(
            f'select validation_id, verdict, reasons from {sql_models[VERDICTS].schema}."{VERDICTS}"').fetchall()}
        cur = con.execute(f'select * from {sql_models[CHECKS].schema}."{CHECKS}" order by validation_id, check_number')
        cols = [d[0] for d in cur.description]
        checks: dict[str, list[dict]] = {}
        for row in cur.fetchall():
            check = dict(zip(cols, row))
            checks.setdefault(check.pop("validation_id"), []).append(check)
    return [SqlVerdict(verdicts[i][0], list(verdicts[i][1]), checks.get(i, [])) for i in ids]

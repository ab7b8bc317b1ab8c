"""Load hardware-validation evidence records into raw.hardware_validations."""
import datetime as dt
import hashlib
import json
import math
from pathlib import Path

import duckdb
import polars as pl

from flows.ingest.adapters import ADAPTERS
from flows.ingest.sources import Source
from flows.load import QUARANTINE_SCHEMA
from flows.probe.evidence import read_records

VALIDATION_SCHEMA = {
    "validation_id": pl.String, "host": pl.String, "port": pl.Int64, "user": pl.String,
    "offer_id": pl.String, "provider": pl.String, "verdict": pl.String, "reasons": pl.List(pl.String),
    "validated_at": pl.String, "quoted_gpu_model": pl.String, "quoted_gpu_count": pl.Int64,
    "gpu_models_found": pl.List(pl.String), "gpu_count_found": pl.Int64, "logical_device_count": pl.Int64,
    "vram_bytes_per_gpu_min": pl.Int64, "rocm_version": pl.String, "partition_modes": pl.List(pl.String),
    "gemm_bf16_8192_tflops": pl.Float64, "hbm_copy_gbps": pl.Float64, "findings": pl.List(pl.String),
    "host_key_fingerprint": pl.String, "probe_sha256": pl.String, "evidence_path": pl.String,
}


# A record that cannot be loaded becomes one quarantine row under this source name and code.
EVIDENCE_SOURCE = "hardware-validations"
EVIDENCE_INVALID = "EVIDENCE_INVALID"
_PYTHON_TYPES = {pl.String: str, pl.Int64: int, pl.Float64: (int, float)}


def _type_problem(name: str, value, dtype) -> str | None:
    """Why a record's value cannot go in its column (None when it can)."""
    if value is None:
        return None
    if isinstance(dtype, pl.List):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return f"{name}: expected a list of text, got {type(value).__name__}"
        return None
    wanted = _PYTHON_TYPES[dtype]
    if isinstance(value, bool) or not isinstance(value, wanted):
        return f"{name}: expected {dtype}, got {type(value).__name__} {str(value)[:40]!r}"
    if dtype == pl.Int64 and not -2**63 <= value < 2**63:
        return f"{name}: {value} does not fit a 64-bit integer"
    if dtype == pl.Float64 and not math.isfinite(float(value)):
        return f"{name}: {value} is not a finite number"
    return None


def _record_problems(record: dict, row: dict) -> list[str]:
    """Every reason one evidence record cannot be loaded (a bad one must never fail the SQL models)."""
    problems = [p for name, dtype in VALIDATION_SCHEMA.items() if (p := _type_problem(name, row[name], dtype))]
    for key in ("validation_id", "offer_id", "verdict", "validated_at"):
        if not isinstance(record.get(key), str) or not record[key].strip():
            problems.append(f"{key}: missing or empty")
    try:
        stamp = dt.datetime.fromisoformat(record["validated_at"])
        if stamp.tzinfo is None:
            problems.append(f"validated_at: {record['validated_at']!r} has no time zone")
    except (TypeError, ValueError, KeyError):
        problems.append(f"validated_at: {str(record.get('validated_at'))[:40]!r} is not an ISO 8601 time")
    return problems


def _quarantine_row(path: str, reason: str) -> dict:
    raw = Path(path).read_bytes() if Path(path).is_file() else b""
    return {"source_name": EVIDENCE_SOURCE, "source_file": path, "file_sha256": hashlib.sha256(raw).hexdigest(),
            "row_number": 1, "reason_code": EVIDENCE_INVALID, "detail": reason,
            "raw_record": json.dumps({"text": raw[:2000].decode("utf-8", "replace")})}


def _row(record: dict, path: str) -> dict:
    measured = record.get("measured")
    measured = measured if isinstance(measured, dict) else {}
    return {
        **{k: record.get(k) for k in ("validation_id", "host", "port", "user", "offer_id", "provider", "verdict",
                                      "reasons", "validated_at", "quoted_gpu_model", "quoted_gpu_count",
                                      "findings", "host_key_fingerprint", "probe_sha256")},
        "gpu_models_found": measured.get("gpu_models"), "gpu_count_found": measured.get("gpu_count"),
        "logical_device_count": measured.get("logical_device_count"),
        "vram_bytes_per_gpu_min": measured.get("vram_bytes_per_gpu_min"),
        "rocm_version": measured.get("rocm_version"), "partition_modes": measured.get("partition_modes"),
        "gemm_bf16_8192_tflops": measured.get("gemm_bf16_8192_tflops"), "hbm_copy_gbps": measured.get("hbm_copy_gbps"),
        "evidence_path": path,
    }


def load_validations(con: duckdb.DuckDBPyConnection, directory: Path) -> list[tuple[str, str]]:
    """Create raw.hardware_validations from directory's records; quarantine and return (file, reason) for unusable ones.

    Needs raw.quarantine (load_staged) to exist: each unusable record adds one row there with EVIDENCE_INVALID.
    """
    records, rejected = read_records(directory) if Path(directory).is_dir() else ([], [])
    rows = []
    for record, path in records:
        row = _row(record, path)
        problems = _record_problems(record, row)
        if problems:
            rejected.append((path, "; ".join(problems)))
        else:
            rows.append(row)
    frame = pl.DataFrame(rows, schema=VALIDATION_SCHEMA, strict=True)
    con.register("__validations", frame.to_arrow())
    con.execute("create table raw.hardware_validations as select * from __validations")
    con.unregister("__validations")
    if rejected:
        quarantined = pl.DataFrame([_quarantine_row(path, reason) for path, reason in rejected],
                                   schema=QUARANTINE_SCHEMA)
        con.register("__bad_evidence", quarantined.to_arrow())
        con.execute("insert into raw.quarantine by name select * from __bad_evidence")
        con.unregister("__bad_evidence")
    return rejected


def validation_benchmark_sources(directory: Path) -> list[Source]:
    """Result files of representative benchmarks run during validations, one source per format.

    `validate-host --workload` keeps them under validations/benchmarks/<format id>/; the refresh
    ingests them like any declared benchmark file (their --metadata names provider, GPU and count).
    """
    root = Path(directory) / "benchmarks"
    if not root.is_dir():
        return []
    return [Source(name=f"validation-benchmarks-{fmt.name}", kind="benchmarks", format=fmt.name,
                   path="*.json", base_dir=fmt, line=0)
            for fmt in sorted(root.iterdir()) if fmt.is_dir() and fmt.name in ADAPTERS]

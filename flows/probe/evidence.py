"""Validation evidence on disk: one JSON record per validation, raw probe output content-addressed."""
import hashlib
import json
import os
import tempfile
from pathlib import Path

EVIDENCE_SCHEMA = "provider-eval.validation/1"


def validations_dir(warehouse_path: Path) -> Path:
    """Evidence lives beside the warehouse file, so a refresh of that warehouse finds it."""
    return Path(warehouse_path).parent / "validations"


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def store_raw_probe(directory: Path, raw: bytes) -> str:
    """Keep the probe's raw output under its sha256 (the same output is stored once)."""
    digest = hashlib.sha256(raw).hexdigest()
    path = directory / "probes" / f"{digest}.json"
    if not path.exists():
        _atomic_write(path, raw)
    return digest


def validation_id(host: str, port: int, offer_id: str, validated_at: str, probe_sha256: str) -> str:
    """A stable id for one validation run."""
    key = "\x1f".join([host, str(port), offer_id, validated_at, probe_sha256])
    return "val-" + hashlib.sha256(key.encode()).hexdigest()[:16]


def new_record(validation_id: str, host: str, port: int, user: str, quote: dict, validated_at: str, probe_sha256: str,
               probe: dict | None, transport_problems: list[str], recorded_reasons: list[str], **extra) -> dict:
    """A record before its verdict: the run's facts; the SQL models (validation_sql) decide and fill verdict and reasons."""
    return {
        "schema_version": EVIDENCE_SCHEMA, "validation_id": validation_id,
        "host": host, "port": port, "user": user,
        "offer_id": quote["offer_id"], "provider": quote["provider"],
        "quoted_gpu_model": quote["gpu_model"], "quoted_gpu_count": quote["gpus_per_node"],
        "quoted_virtualisation": quote.get("virtualisation"),
        # Placeholder until decided (recorded_reasons: what a record stands on when its probe output is missing).
        "verdict": "inconclusive", "reasons": list(recorded_reasons), "transport_problems": list(transport_problems),
        "findings": [str(f.get("code")) for f in (probe or {}).get("findings") or [] if isinstance(f, dict)],
        "validated_at": validated_at, "probe_sha256": probe_sha256,
        "probe_schema_version": (probe or {}).get("schema_version"), "workload": None,
        "host_key_fingerprint": None, "remote_exit_status": None, **extra,
    }


def write_record(directory: Path, record: dict) -> Path:
    """Write one validation record as <validation_id>.json (atomic)."""
    path = directory / f"{record['validation_id']}.json"
    _atomic_write(path, json.dumps(record, indent=2, sort_keys=True, default=str).encode())
    return path


def read_records(directory: Path) -> tuple[list[tuple[dict, str]], list[tuple[str, str]]]:
    """Every validation record in directory with its file, and (file, reason) for each one that cannot be used."""
    records, rejected = [], []
    for path in sorted(Path(directory).glob("val-*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:
            rejected.append((str(path), f"not readable JSON: {type(exc).__name__}: {str(exc)[:200]}"))
            continue
        if not isinstance(record, dict):
            rejected.append((str(path), f"not a JSON object (a {type(record).__name__})"))
            continue
        missing = [k for k in ("validation_id", "host", "offer_id", "verdict", "reasons", "validated_at") if k not in record]
        if record.get("schema_version") != EVIDENCE_SCHEMA or missing:
            rejected.append((str(path), f"not a {EVIDENCE_SCHEMA} record (missing {missing})"))
            continue
        if record["verdict"] not in ("pass", "fail", "inconclusive") or not isinstance(record["reasons"], list):
            rejected.append((str(path), f"verdict {record['verdict']!r} or reasons are not valid"))
            continue
        records.append((record, str(path)))
    return records, rejected

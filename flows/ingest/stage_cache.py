"""Staged Parquet kept between refreshes, keyed by a file's content and the code that staged it.

A scheduled refresh lands a few new files into a store of thousands; staging is deterministic
(same bytes, source settings, landing time and code → same rows), so only new files are parsed.
Entries are written whole (a temporary folder renamed into place) and pruned after a refresh
when no landed file uses them any more (a code or reference-data change makes new keys).
"""
import hashlib
import json
import os
import shutil
import uuid
from dataclasses import asdict, replace
from pathlib import Path

from flows.ingest.land import LandedFile
from flows.ingest.stage import FileOutcome
from provider_eval.paths import PROJECT_ROOT, REFERENCE_DIR

# What staging depends on besides the file: the adapters and staging code, the contracts, and
# the reference tables the adapters read (GPU aliases, FX rates, the GPU catalog).
CODE = [PROJECT_ROOT / "flows" / "ingest", PROJECT_ROOT / "models"]
OUTCOME = "outcome.json"


def code_fingerprint() -> str:
    """sha256 over the staging code and the reference data (file names and bytes)."""
    digest = hashlib.sha256()
    files = [p for d in CODE for p in d.rglob("*.py")] + list(REFERENCE_DIR.glob("*.csv"))
    for path in sorted(files):
        digest.update(str(path.relative_to(PROJECT_ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_key(landed: LandedFile, fmt: str, defaults: dict, fingerprint: str) -> str:
    """Everything a file's staged rows depend on, hashed."""
    parts = [fingerprint, fmt, defaults, landed.source_name, landed.file_sha256, landed.original_path,
             landed.first_seen_at, [c["file_sha256"] for c in landed.companions]]
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def lookup(cache_dir: Path, key: str) -> FileOutcome | None:
    """The staged outcome stored under key, or None (never stored, or a file of it is missing)."""
    entry = cache_dir / key
    try:
        record = json.loads((entry / OUTCOME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    outcome = FileOutcome(**record)
    outcome = replace(
        outcome,
        accepted_parquet=_inside(entry, outcome.accepted_parquet),
        quarantine_parquet=_inside(entry, outcome.quarantine_parquet),
        detail_parquets={t: _inside(entry, p) for t, p in outcome.detail_parquets.items()},
    )
    paths = [outcome.accepted_parquet, outcome.quarantine_parquet, *outcome.detail_parquets.values()]
    return outcome if all(p is None or Path(p).exists() for p in paths) else None


def store(cache_dir: Path, key: str, outcome: FileOutcome) -> FileOutcome:
    """Move a freshly staged file's Parquet into the cache; returns the outcome pointing there."""
    entry = cache_dir / key
    if entry.exists():  # same key staged twice in one refresh (never expected): keep the first
        return lookup(cache_dir, key) or outcome
    tmp = cache_dir / f".tmp-{key}-{uuid.uuid4().hex}"
    tmp.mkdir(parents=True)
    try:
        return _fill(tmp, entry, outcome)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)  # e.g. disk full: a half entry must not hold the space
        raise


def _fill(tmp: Path, entry: Path, outcome: FileOutcome) -> FileOutcome:
    moved = {}
    for path in [outcome.accepted_parquet, outcome.quarantine_parquet, *outcome.detail_parquets.values()]:
        if path is not None:
            moved[path] = str(entry / Path(path).name)
            shutil.move(path, tmp / Path(path).name)
    stored = replace(
        outcome,
        accepted_parquet=moved.get(outcome.accepted_parquet),
        quarantine_parquet=moved.get(outcome.quarantine_parquet),
        detail_parquets={t: moved[p] for t, p in outcome.detail_parquets.items()},
    )
    record = {k: (Path(v).name if k.endswith("_parquet") and v else v) for k, v in asdict(stored).items()}
    record["detail_parquets"] = {t: Path(p).name for t, p in stored.detail_parquets.items()}
    (tmp / OUTCOME).write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, entry)
    return stored


def prune(cache_dir: Path, keep: set[str]) -> None:
    """Remove entries no landed file uses any more, and halves a killed refresh left (hold the writer lock)."""
    if not cache_dir.is_dir():
        return
    for entry in cache_dir.iterdir():
        if entry.name not in keep:
            shutil.rmtree(entry, ignore_errors=True)


def _inside(entry: Path, name: str | None) -> str | None:
    return None if name is None else str(entry / name)

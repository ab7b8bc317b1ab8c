"""Staged Parquet kept between refreshes, keyed by a file's content and the code that staged it.

A scheduled refresh lands a few new files into a store of thousands; staging is deterministic
(same bytes, source settings, landing time and code → same rows), so only new files are parsed.
Entries are written whole (a temporary folder renamed into place) and pruned after a refresh
when no landed file uses them any more (a code or reference-data change makes new keys).
An entry is used only when it proves itself: its outcome names the file hash its key was made
from, and every Parquet file still has the sha256 recorded when it was stored — read again unless
the file still has the size, times and inode it had then (a rewrite changes its ctime, which
cannot be set back; re-reading every entry's Parquet made each refresh read the whole staged
history; one read again and found unchanged, e.g. in a cache restored from a backup, gets its new
stamp recorded). Anything else (a mixed-up, half-written or tampered entry) is removed and the file
staged again, never published.
"""
import hashlib
import json
import os
import shutil
import time
import uuid
from dataclasses import asdict, replace
from pathlib import Path

from flows.ingest.land import SETTLED_NS, LandedFile, file_stamp, sha256_of
from flows.ingest.stage import FileOutcome
from provider_eval.paths import PROJECT_ROOT, REFERENCE_DIR

# What staging depends on besides the file: the adapters and staging code, the contracts, and
# the reference tables the adapters read (GPU aliases, FX rates, the GPU catalog) and their reader.
CODE = [PROJECT_ROOT / "flows" / "ingest", PROJECT_ROOT / "models", PROJECT_ROOT / "provider_eval" / "reference.py"]
OUTCOME = "outcome.json"


def code_fingerprint() -> str:
    """sha256 over the staging code and the reference data (file names and bytes)."""
    digest = hashlib.sha256()
    files = [p for d in CODE for p in (d.rglob("*.py") if d.is_dir() else [d])] + list(REFERENCE_DIR.glob("*.csv"))
    for path in sorted(files):
        digest.update(str(path.relative_to(PROJECT_ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_key(landed: LandedFile, fmt: str, defaults: dict, fingerprint: str) -> str:
    """Everything a file's staged rows depend on, hashed."""
    parts = [fingerprint, fmt, defaults, landed.source_name, landed.file_sha256, landed.original_path,
             landed.first_seen_at, [c["file_sha256"] for c in landed.companions]]
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


class EntryMismatch(Exception):
    """An outcome offered for storage under a key made from another file (a pairing bug)."""


def lookup(cache_dir: Path, key: str, file_sha256: str, problems: list | None = None) -> FileOutcome | None:
    """The staged outcome stored under key, or None (never stored, incomplete, or failing its checks).

    file_sha256 is the hash of the landed file the key was made from. An entry that exists but
    fails a check is removed (so the file is staged again) and described in `problems`.
    """
    entry = cache_dir / key
    if not entry.is_dir():
        return None
    problem = None
    try:
        record = json.loads((entry / OUTCOME).read_text(encoding="utf-8"))
        hashes = record.pop("parquet_sha256")
        stamps = record.pop("parquet_stamp", {})
        outcome = FileOutcome(**record)
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        problem = f"unreadable outcome ({type(exc).__name__})"
    else:
        if outcome.file_sha256 != file_sha256:
            problem = f"outcome of file {outcome.file_sha256[:12]} stored under a key of file {file_sha256[:12]}"
        else:
            restamped = {}
            problem = _check_parquet(entry, outcome, hashes, stamps, restamped)
            if problem is None and restamped:
                _restamp(entry, {**record, "parquet_sha256": hashes, "parquet_stamp": {**stamps, **restamped}})
    if problem is not None:
        if problems is not None:
            problems.append(f"staged-cache entry {key[:12]}: {problem}; staged again")
        shutil.rmtree(entry, ignore_errors=True)
        return None
    outcome = replace(
        outcome,
        accepted_parquet=_inside(entry, outcome.accepted_parquet),
        quarantine_parquet=_inside(entry, outcome.quarantine_parquet),
        detail_parquets={t: _inside(entry, p) for t, p in outcome.detail_parquets.items()},
    )
    return outcome


def _names(outcome: FileOutcome) -> list[str]:
    """The Parquet file names an outcome points to."""
    paths = [outcome.accepted_parquet, outcome.quarantine_parquet, *outcome.detail_parquets.values()]
    return [Path(p).name for p in paths if p is not None]


def _check_parquet(entry: Path, outcome: FileOutcome, hashes: dict, stamps: dict, restamped: dict) -> str | None:
    """Why the entry's Parquet files are not the ones stored (missing, extra or changed), or None.

    A file whose stamp (size, times, inode) is the one recorded when it was stored is not read again;
    one read again and found unchanged gets its new stamp in `restamped` (when it has settled)."""
    names = _names(outcome)
    if sorted(names) != sorted(hashes):
        return "its Parquet files do not match its outcome"
    for name in names:
        try:
            stamp = file_stamp(entry / name)
            if stamps.get(name) == stamp:
                continue
            if sha256_of(entry / name) != hashes[name]:
                return f"{name} changed since it was stored (sha256 mismatch)"
            if time.time_ns() - max(stamp[1], stamp[2]) > SETTLED_NS and file_stamp(entry / name) == stamp:
                restamped[name] = stamp
        except OSError:
            return f"{name} is missing"
    return None


def _restamp(entry: Path, record: dict) -> None:
    """Record the stamps of Parquet files hashed again and found unchanged (a cache copied or restored
    from a backup gets new inodes and change times): otherwise every later refresh would hash them again,
    reading the whole staged history. Best effort: a failed write only means hashing them next time."""
    tmp = entry / f".{OUTCOME}.{uuid.uuid4().hex}"
    try:
        tmp.write_text(json.dumps(record), encoding="utf-8")
        os.replace(tmp, entry / OUTCOME)
    except OSError:
        tmp.unlink(missing_ok=True)


def store(cache_dir: Path, key: str, file_sha256: str, outcome: FileOutcome) -> FileOutcome:
    """Move a freshly staged file's Parquet into the cache; returns the outcome pointing there.

    file_sha256 is the hash the key was made from: an outcome of any other file is refused.
    """
    if outcome.file_sha256 != file_sha256:
        raise EntryMismatch(f"outcome of file {outcome.file_sha256} offered under a key of file {file_sha256}")
    entry = cache_dir / key
    if entry.exists():  # same key staged twice in one refresh (never expected): keep the first
        return lookup(cache_dir, key, file_sha256) or outcome
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
    # Each file's stamp with its hash: the stamp survives the rename of the folder into place.
    record["parquet_stamp"] = {name: file_stamp(tmp / name) for name in _names(stored)}
    record["parquet_sha256"] = {name: sha256_of(tmp / name) for name in _names(stored)}
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

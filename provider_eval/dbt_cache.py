"""dbt's parsed project, kept per version of sql/ (and of dbt), so a build never parses it twice.

A full parse costs 1-2.5 s per build here and finds the same graph every time the project's files,
dbt's version and the warehouse's catalog name are the same: the parsed manifest is kept in memory
for this process and pickled into the cache folder for the next one.
"""
import dataclasses
import hashlib
import os
import pickle
import shutil
import sys
import tempfile
import threading
from importlib import metadata
from pathlib import Path
from typing import Callable

from provider_eval import user_cache

# Packages whose classes a pickled manifest is made of: another version of any of them parses anew.
_PICKLED_WITH = ("dbt-core", "dbt-duckdb", "dbt-adapters", "dbt-common", "dbt-semantic-interfaces", "mashumaro")
_IN_MEMORY: dict[str, bytes] = {}
_LOCK = threading.Lock()


def tree_hash(sql_dir: Path) -> str:
    """A digest of every file of the dbt project and of dbt's version: the manifest's cache key."""
    # The installed distribution's version: the same string as dbt.version.__version__, without
    # importing dbt (0.6 s of every report, which otherwise needs no dbt when its docs site is current).
    digest = hashlib.sha256(metadata.version("dbt-core").encode())
    # Every file: a seed (.csv) or a docs block is part of what dbt parses as much as a model is.
    for path in sorted(p for p in sql_dir.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(str(path.relative_to(sql_dir)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:32]


def cache_root() -> Path:
    """Where dbt's manifests are kept (in the user's provider-eval cache folder)."""
    return user_cache.root() / "dbt-manifests"


def parse_key(sql_dir: Path, catalog: str, schema: str) -> str:
    """What a parsed manifest depends on: the project's files and folder, dbt's packages, Python, and
    the profile's catalog and schema (every node carries them; the file's folder and settings it does not)."""
    digest = hashlib.sha256(f"{tree_hash(sql_dir)}\0{sql_dir.resolve()}\0{catalog}\0{schema}\0{sys.version}".encode())
    for package in _PICKLED_WITH:
        digest.update(f"\0{package}={metadata.version(package)}".encode())
    return digest.hexdigest()[:32]


def _path(key: str) -> Path:
    return cache_root() / "parsed" / f"{key}.pickle"


def load(key: str, check=lambda manifest: True):
    """A fresh copy of the parsed manifest kept under key that passes check, or None.

    A copy each time: a build compiles its nodes into the manifest it is given.
    """
    with _LOCK:
        data = _IN_MEMORY.get(key)
    if data is None:
        try:
            data = _path(key).read_bytes()
        except OSError:
            return None
    try:
        cls, fields = pickle.loads(data)
        manifest = cls(**fields)
    except Exception:  # noqa: BLE001  (a truncated or foreign file: parse anew, and replace it)
        return None
    if not check(manifest):
        return None
    with _LOCK:
        _IN_MEMORY[key] = data
    return manifest


def store(key: str, manifest) -> None:
    """Keep a parsed (not yet compiled) manifest under key, in memory and in the cache folder (atomically)."""
    # Its public fields, not the Manifest itself: dbt's Manifest.__reduce_ex__ lists its fields by
    # position and misses one (fixtures), so a pickled Manifest comes back with its lookups shifted.
    # The private ones (lookups, lock) are caches dbt rebuilds on first use.
    fields = {f.name: getattr(manifest, f.name) for f in dataclasses.fields(manifest) if not f.name.startswith("_")}
    data = pickle.dumps((type(manifest), fields), protocol=pickle.HIGHEST_PROTOCOL)
    with _LOCK:
        _IN_MEMORY[key] = data
    path = _path(key)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".keep-", dir=path.parent)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except OSError:  # a read-only cache folder: this process still keeps it in memory
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def compiled_path(sql_dir: Path) -> Path:
    """Where the compiled manifest (every model's SQL) of this version of sql/ is kept."""
    return cache_root() / tree_hash(sql_dir) / "manifest.json"


def keep_compiled(sql_dir: Path, write: Callable[[Path], None]) -> Path:
    """Keep a compiled manifest for this version of sql/ unless one is kept; write(path) writes it
    (atomically: a whole folder is renamed into place). Returns the kept manifest's path."""
    kept = compiled_path(sql_dir)
    if kept.exists():
        return kept
    kept.parent.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="keep-", dir=kept.parent.parent))
    try:
        write(staging / kept.name)
        os.replace(staging, kept.parent)
    except OSError:  # another process kept the same version first: either copy is the same
        pass
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return kept

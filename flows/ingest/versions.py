"""The lifecycle of input files: which content each declared path holds now, and what it held before.

Landing keeps every content ever seen (by hash); this records, per source and path, the runs of
consecutive successful reads of one content (a *version*). The latest version at a path still
read is **current**, the earlier ones are **superseded** (by the version after them), and the
latest version at a path no longer there is **withdrawn**. A source that could not be read (a
failed fetch) records nothing, so a failure never supersedes or withdraws anything.
docs/inputs.md describes the lifecycle; the state is rewritten whole after each publish.
"""
import json
import os
from dataclasses import dataclass, fields, replace
from pathlib import Path

from flows.ingest.land import LandedFile

STATE_VERSION = 1


@dataclass(frozen=True)
class Version:
    """One content at one path of one source, over a run of consecutive reads."""

    source_name: str
    original_path: str
    file_sha256: str
    first_seen_at: str  # ISO-8601 UTC: the first read of this run
    last_seen_at: str  # the latest read of this run
    reads: int  # successful reads of the source in this run

    def as_row(self) -> dict:
        """The fields as a dict (dataclasses.asdict deep-copies each value: slow over thousands of versions)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class Lifecycle:
    """Every version, and when each source was last read successfully."""

    versions: list[Version]
    last_read_at: dict[str, str]


def state_path(landing_dir: Path, warehouse_name: str) -> Path:
    """One state per warehouse file: its writer lock covers the rewrite."""
    return landing_dir / f"versions.{warehouse_name}.json"


def read_state(path: Path) -> Lifecycle:
    """The recorded lifecycle, or an empty one (first refresh, or a state from an unknown layout)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("state_version") != STATE_VERSION:
            return Lifecycle([], {})
        return Lifecycle([Version(**v) for v in record["versions"]], dict(record["last_read_at"]))
    except (OSError, ValueError, TypeError, KeyError):
        return Lifecycle([], {})


def write_state(path: Path, state: Lifecycle) -> None:
    """Replace the state file whole (a killed refresh leaves the previous one)."""
    tmp = path.with_name(path.name + ".part")
    tmp.parent.mkdir(parents=True, exist_ok=True)
    body = {"state_version": STATE_VERSION, "last_read_at": state.last_read_at,
            "versions": [v.as_row() for v in state.versions]}
    tmp.write_text(json.dumps(body, indent=0), encoding="utf-8")
    os.replace(tmp, path)


def record_reads(state: Lifecycle, index: list[LandedFile], reads: dict[str, dict[str, str]], now: str) -> Lifecycle:
    """The lifecycle after this refresh read `reads` (source → {path: sha256}) at `now`.

    Files landed before versions were recorded (or by another warehouse) join as one-read
    versions at their first landing, so an upgrade keeps their order at each path.
    """
    versions = list(state.versions)
    known = {(v.source_name, v.file_sha256) for v in versions}
    for lf in index:
        if (lf.source_name, lf.file_sha256) not in known:
            known.add((lf.source_name, lf.file_sha256))
            versions.append(Version(lf.source_name, lf.original_path, lf.file_sha256,
                                    lf.first_seen_at, lf.first_seen_at, 1))
    versions.sort(key=lambda v: v.first_seen_at)  # stable: keeps the recorded order on ties
    latest = {}
    for i, v in enumerate(versions):
        latest[(v.source_name, v.original_path)] = i
    last_read = dict(state.last_read_at)
    for source, present in reads.items():
        previous = last_read.get(source)
        for path, sha in present.items():
            i = latest.get((source, path))
            v = versions[i] if i is not None else None
            if v is not None and v.file_sha256 == sha and v.last_seen_at == now:
                continue  # landed by this very refresh: its version starts now
            if v is not None and v.file_sha256 == sha and (previous is None or v.last_seen_at == previous):
                versions[i] = replace(v, last_seen_at=now, reads=v.reads + 1)  # the same run goes on
            else:
                latest[(source, path)] = len(versions)
                versions.append(Version(source, path, sha, now, now, 1))
        last_read[source] = now
    return Lifecycle(versions, last_read)


def version_rows(state: Lifecycle, sources: set[str]) -> list[dict]:
    """One row per version of the declared sources, numbered per path, with its state."""
    by_path: dict[tuple[str, str], list[Version]] = {}
    for v in state.versions:
        if v.source_name in sources:
            by_path.setdefault((v.source_name, v.original_path), []).append(v)
    rows = []
    for (source, _), runs in by_path.items():
        for n, v in enumerate(runs, start=1):
            later = runs[n] if n < len(runs) else None
            if later is not None:
                status = "superseded"
            else:
                status = "current" if v.last_seen_at == state.last_read_at.get(source) else "withdrawn"
            rows.append({**v.as_row(), "version": n, "state": status,
                         "superseded_by": later.file_sha256 if later else None})
    return rows

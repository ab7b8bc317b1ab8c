"""The FileContext staging gives an adapter, for tests that run one adapter on one file."""
from pathlib import Path

from flows.ingest.adapters.base import FileContext
from flows.ingest.land import sha256_of


def file_context(path: Path, defaults: dict | None = None, companions: dict | None = None, source_name: str = "t",
                 first_seen_at: str = "2026-01-01T00:00:00+00:00", original_path: str | None = None) -> FileContext:
    """A context for `path` as if landed: its real content hash, its own name and path."""
    return FileContext(path=path, source_name=source_name, original_name=path.name, file_sha256=sha256_of(path),
                       first_seen_at=first_seen_at, defaults=defaults or {},
                       original_path=original_path or str(path), companions=companions or {})

"""Download every `url:` source for one refresh; a failing provider becomes a manifest row, never an exception."""
import dataclasses
import os
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from flows.ingest.adapters import ADAPTERS
from flows.ingest.fetch import FetchPolicy, fetch, redacted
from flows.ingest.sources import Source
from flows.ingest.stage import FileOutcome
from provider_eval.safe_paths import child

POLICY_FIELDS = {"timeout_s": "read_timeout_s", "deadline_s": "deadline_s", "max_bytes": "max_bytes",
                 "attempts": "attempts", "backoff_s": "backoff_s", "max_retry_after_s": "max_retry_after_s"}


@dataclasses.dataclass(frozen=True)
class Fetched:
    """A downloaded body waiting to be landed like a file."""

    source_name: str
    body_path: Path
    url: str  # redacted: no credentials, no query string


def policy_for(source: Source) -> FetchPolicy:
    """The default FetchPolicy with this source's `fetch:` overrides."""
    overrides = {POLICY_FIELDS[k]: (int(v) if k in ("max_bytes", "attempts") else float(v))
                 for k, v in source.fetch.items()}
    return dataclasses.replace(FetchPolicy(), **overrides)


def _failure(source: Source, reason: str, sha256: str, now: str) -> FileOutcome:
    return FileOutcome(source.name, source.format, ADAPTERS[source.format].table, sha256, redacted(source.url),
                       now, "rejected", reason, 0, 0, 0, None, None)


def fetch_url_sources(sources: list[Source], downloads_dir: Path, now: str) -> tuple[list[Fetched], list[FileOutcome]]:
    """Fetch each url source in turn; return the bodies to land and a rejected outcome per failure."""
    fetched, failures = [], []
    for source in (s for s in sources if s.url is not None):
        token = None
        if source.auth_env:
            token = os.environ.get(source.auth_env)
            if not token:
                failures.append(_failure(source, f"AUTH_MISSING: environment variable {source.auth_env} is not set",
                                         "", now))
                continue
        # Keep the URL's file extension so the landed name shows what the body is (.json, .csv).
        suffix = PurePosixPath(urlsplit(source.url).path).suffix[:8]
        result = fetch(source.url, child(downloads_dir, source.name, f"body{suffix}"), token, policy_for(source))
        if result.body_path is None:
            failures.append(_failure(source, result.reason, result.sha256, now))
        else:
            fetched.append(Fetched(source.name, result.body_path, result.url))
    return fetched, failures

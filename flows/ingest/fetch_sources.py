"""Download one `url:` source for a refresh; a failing provider becomes a manifest row, never an exception."""
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


def fetch_url_source(source: Source, downloads_dir: Path, now: str) -> Fetched | FileOutcome:
    """Fetch one url source: its body to land, or a rejected outcome saying why there is none."""
    token = None
    if source.auth_env:
        token = os.environ.get(source.auth_env)
        if not token:
            return _failure(source, f"AUTH_MISSING: environment variable {source.auth_env} is not set", "", now)
    # Keep the URL's file extension so the landed name shows what the body is (.json, .csv).
    suffix = PurePosixPath(urlsplit(source.url).path).suffix[:8]
    result = fetch(source.url, child(downloads_dir, source.name, f"body{suffix}"), token, policy_for(source))
    if result.body_path is None:
        return _failure(source, result.reason, result.sha256, now)
    return Fetched(source.name, result.body_path, result.url)


def unexpected_failure(source: Source, exc: BaseException, now: str) -> FileOutcome:
    """A fetch that raised (a bug, a disk error) after its retries: a rejected outcome, not a failed refresh."""
    first_line = (str(exc).splitlines() or [""])[0]
    return _failure(source, f"FETCH_FAILED: {type(exc).__name__}" + (f": {first_line}" if first_line else ""), "", now)

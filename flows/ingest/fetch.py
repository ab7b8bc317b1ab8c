"""Download a `url:` source's body over HTTP(S): bounded in time and size, retried only when retrying can help."""
import email.utils
import hashlib
import datetime as dt
import os
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx

RETRYABLE = {429, 500, 502, 503, 504}


@dataclass(frozen=True)
class FetchPolicy:
    """How hard to try: timeouts from the client library, a size cap, and bounded retries."""

    connect_timeout_s: float = 10.0
    read_timeout_s: float = 30.0  # longest wait for the next bytes
    deadline_s: float = 120.0  # the whole download, however slowly it trickles
    max_bytes: int = 64 * 2**20
    attempts: int = 4
    backoff_s: float = 1.0  # doubled after each retry
    max_retry_after_s: float = 60.0  # a longer Retry-After is not waited for: the fetch fails


@dataclass(frozen=True)
class FetchResult:
    """A downloaded body on disk, or why there is none (a manifest reason `CODE: detail`)."""

    url: str
    body_path: Path | None
    reason: str | None
    sha256: str
    attempts: int


class FetchFailed(Exception):
    """One attempt failed; `retry_after_s` is set when the server said another attempt may work."""

    def __init__(self, code: str, detail: str, retry_after_s: float | None = None, body: bytes = b""):
        super().__init__(f"{code}: {detail}")
        self.code, self.detail, self.retry_after_s, self.body = code, detail, retry_after_s, body


def redacted(url: str) -> str:
    """The URL without user:password or query string, safe for logs and the manifest."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return f"{parts.scheme}://{host}{parts.path}"


def _retry_after(value: str | None, default: float) -> float:
    """Retry-After as seconds (delta-seconds or an HTTP date); the backoff when absent or unreadable."""
    if not value:
        return default
    if value.strip().isdigit():
        return float(value.strip())
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return default
    return max(0.0, (when - dt.datetime.now(dt.timezone.utc)).total_seconds())


def _attempt(client: httpx.Client, url: str, headers: dict, policy: FetchPolicy, backoff: float) -> bytes:
    """One GET; the whole body or FetchFailed naming what went wrong."""
    started = time.monotonic()
    try:
        with client.stream("GET", url, headers=headers) as response:
            if response.status_code in RETRYABLE:
                wait = _retry_after(response.headers.get("Retry-After"), backoff)
                raise FetchFailed("HTTP_ERROR", f"HTTP {response.status_code} from {redacted(url)}", wait)
            if response.status_code != 200:
                raise FetchFailed("HTTP_ERROR", f"HTTP {response.status_code} from {redacted(url)}")
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > policy.max_bytes:
                raise FetchFailed("TOO_LARGE", f"Content-Length {declared} exceeds {policy.max_bytes} bytes")
            chunks, size = [], 0
            try:
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    chunks.append(chunk)
                    if size > policy.max_bytes:
                        raise FetchFailed("TOO_LARGE", f"body exceeds {policy.max_bytes} bytes")
                    if time.monotonic() - started > policy.deadline_s:
                        raise FetchFailed("FETCH_TIMEOUT", f"body not complete after {policy.deadline_s:g} s")
            except httpx.RemoteProtocolError as exc:
                # The connection closed before Content-Length bytes arrived.
                raise FetchFailed("TRUNCATED", f"{redacted(url)}: {exc}", body=b"".join(chunks)) from None
            body = b"".join(chunks)
            # Content-Length counts bytes on the wire (before any Content-Encoding is undone).
            if declared and declared.isdigit() and response.num_bytes_downloaded != int(declared):
                raise FetchFailed("TRUNCATED", f"received {response.num_bytes_downloaded} of {declared} bytes "
                                               f"from {redacted(url)}", body=body)
            return body
    except httpx.TimeoutException as exc:
        raise FetchFailed("FETCH_TIMEOUT", f"{type(exc).__name__} from {redacted(url)}") from None
    except httpx.HTTPError as exc:
        raise FetchFailed("FETCH_FAILED", f"{type(exc).__name__} from {redacted(url)}") from None


def fetch(url: str, dest: Path, token: str | None = None, policy: FetchPolicy = FetchPolicy(),
          sleep=time.sleep) -> FetchResult:
    """Download url into dest; 429 and 5xx are retried with backoff (honouring Retry-After), nothing else."""
    headers = {"Accept": "application/json, text/csv;q=0.9, */*;q=0.1"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    timeout = httpx.Timeout(policy.read_timeout_s, connect=policy.connect_timeout_s)
    backoff = policy.backoff_s
    with httpx.Client(timeout=timeout, follow_redirects=True, max_redirects=5) as client:
        for attempt in range(1, policy.attempts + 1):
            try:
                body = _attempt(client, url, headers, policy, backoff)
            except FetchFailed as exc:
                retry = exc.retry_after_s is not None and attempt < policy.attempts
                if retry and exc.retry_after_s <= policy.max_retry_after_s:
                    sleep(exc.retry_after_s)
                    backoff *= 2
                    continue
                detail = exc.detail + (f" (after {attempt} attempts)" if attempt > 1 else "")
                return FetchResult(redacted(url), None, f"{exc.code}: {detail}",
                                   hashlib.sha256(exc.body).hexdigest(), attempt)
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(dest.name + ".part")
            tmp.write_bytes(body)
            os.replace(tmp, dest)
            return FetchResult(redacted(url), dest, None, hashlib.sha256(body).hexdigest(), attempt)
    raise AssertionError("unreachable: the loop returns on every path")

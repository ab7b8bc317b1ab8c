"""The refresh's inputs: fetch, land, then stage each file (from the cache, deduplicated, in batches).

ingest() is the one call the refresh flow makes; the rest are its steps (Prefect tasks and helpers).
"""
import datetime as dt
import os
from pathlib import Path

from prefect import get_run_logger, task
from prefect.tasks import exponential_backoff

from flows.ingest import stage_cache, stage_pool, versions
from flows.ingest.adapters import ADAPTERS
from flows.ingest.fetch_sources import Fetched, fetch_url_source, unexpected_failure
from flows.ingest.land import HASHES_NAME, FileHashes, LandedFile, land_file, read_index, read_index_by_key, verify_landed
from flows.ingest.sources import Source
from flows.ingest.stage import FileOutcome
from flows.ingest.stage_pool import stage_files
from provider_eval import progress


# An HTTP failure is not an exception: fetch() already retried what retrying can help (429, 5xx,
# with backoff and Retry-After) and returns the rest as a rejected outcome. Prefect's retries are for
# what raises: writing the body (disk full, NFS), or a bug. Either way one provider never fails the run.
@task(retries=2, retry_delay_seconds=exponential_backoff(backoff_factor=2), retry_jitter_factor=0.5)
def fetch_source(source: Source, downloads_dir: str, now: str) -> Fetched | FileOutcome:
    """Download one `url:` source: its body, or a rejected manifest row saying why there is none."""
    return fetch_url_source(source, Path(downloads_dir), now)


def fetch_sources(sources: list[Source], downloads_dir: str, now: str) -> tuple[list[Fetched], list[FileOutcome]]:
    """Download the `url:` sources in parallel; each failure is a rejected manifest row, not a failed refresh."""
    wanted = [s for s in sources if s.url is not None]
    futures = [fetch_source.submit(s, downloads_dir, now) for s in wanted]
    fetched, failures = [], []
    for source, future in zip(wanted, futures):
        try:
            result = future.result()
        except Exception as exc:  # retries exhausted: the source is rejected, the refresh goes on
            result = unexpected_failure(source, exc, now)
        (fetched if isinstance(result, Fetched) else failures).append(result)
    return fetched, failures


@task(retries=2, retry_delay_seconds=[1, 5])
@progress.timed("land")
def land_sources(sources: list[Source], landing_dir: str, now: str,
                 fetched: list[Fetched] | None = None) -> tuple[list[tuple[LandedFile, str, dict]], dict]:
    """Copy each declared file (and each downloaded body) into the landing store.

    Returns every landed file of these sources, and what this refresh read: source → {path: sha256}
    (a `url:` source whose fetch failed reads nothing). Landing is idempotent, so a retry after an
    I/O error (a full disk freed, an NFS hiccup) lands only what is missing.
    """
    when = dt.datetime.fromisoformat(now)
    known = read_index_by_key(Path(landing_dir))
    # Files unchanged since an earlier refresh hashed them are not read again (FileHashes).
    hashes = FileHashes(Path(landing_dir) / HASHES_NAME)
    reads: dict[str, dict[str, str]] = {}
    for body in fetched or []:
        lf = land_file(body.source_name, body.body_path, Path(landing_dir), when, original=body.url, known=known)
        reads.setdefault(body.source_name, {})[body.url] = lf.file_sha256
    for source in sources:
        if source.url is not None:
            continue
        reads.setdefault(source.name, {})
        matched = source.files()
        if not matched:
            get_run_logger().warning("source %r (line %d): no file matches %r", source.name, source.line, source.path)
        adapter = ADAPTERS[source.format]
        companions_of = adapter.companions
        if adapter.ignores:
            skipped = [p for p in matched if adapter.ignores(p)]
            for path in skipped:
                get_run_logger().info("source %r: %s is not %s; not ingested", source.name, path, source.format)
            matched = [p for p in matched if p not in skipped]
        for path in matched:
            lf = land_file(source.name, path, Path(landing_dir), when,
                           companions=companions_of(path) if companions_of else [], known=known, hashes=hashes)
            reads[source.name][str(path)] = lf.file_sha256
    hashes.save()
    by_name = {s.name: s for s in sources}
    return [(lf, by_name[lf.source_name].format, by_name[lf.source_name].adapter_options())
            for lf in read_index(Path(landing_dir)) if lf.source_name in by_name], reads


@task
@progress.timed("parse")
def stage_batch(batch: list[tuple[str, tuple[LandedFile, str, dict]]], staging_dir: str) -> list[tuple[str, FileOutcome]]:
    """Parse and validate several landed files of one format into Parquet (one task, one contract check).

    Takes (cache key, file) pairs and returns (cache key, outcome) pairs: the key travels with its
    file, so however batches are grouped or finish, no outcome can be stored under another file's key.
    """
    outcomes = stage_files([item for _, item in batch], Path(staging_dir))
    if len(outcomes) != len(batch):
        raise AssertionError(f"{len(batch)} files staged into {len(outcomes)} outcomes")
    for (_, (landed, _, _)), outcome in zip(batch, outcomes):
        if (outcome.source_name, outcome.file_sha256) != (landed.source_name, landed.file_sha256):
            raise AssertionError(f"staging {landed.original_path} returned the outcome of {outcome.original_path}")
    return [(key, outcome) for (key, _), outcome in zip(batch, outcomes)]


# Files per staging task at most: thousands of one-file tasks cost Prefect more than the parsing
# (make bench, 2,000 scrape files), while enough batches remain to keep every worker busy.
MAX_FILES_PER_BATCH = 64
# Input bytes per staging task at most: a batch's frames live at once in its worker, so this bounds
# each worker's memory (make bench, default scale: 64 scrape files of 600 KB peaked at 600 MiB a worker,
# ~20 MiB of them at ~420 MiB, for a few percent more staging time).
MAX_BYTES_PER_BATCH = 20 * 2**20


def batches(unique: list, workers: int, fmt=lambda item: item[1], size_of=lambda item: 0) -> list[list]:
    """Files grouped by format (one adapter and contract per batch), about 2 batches per worker each,
    each batch at most MAX_FILES_PER_BATCH files and MAX_BYTES_PER_BATCH bytes (a bigger file alone)."""
    by_format: dict[str, list] = {}
    for item in unique:
        by_format.setdefault(fmt(item), []).append(item)
    out = []
    for items in by_format.values():
        most = max(1, min(MAX_FILES_PER_BATCH, -(-len(items) // (2 * workers))))
        batch, batch_bytes = [], 0
        for item in items:
            size = size_of(item)
            if batch and (len(batch) == most or batch_bytes + size > MAX_BYTES_PER_BATCH):
                out.append(batch)
                batch, batch_bytes = [], 0
            batch.append(item)
            batch_bytes += size
        out.append(batch)
    return out


def _dedupe(landed: list[tuple[LandedFile, str, dict]]) -> tuple[list, list[FileOutcome]]:
    """The same content declared twice in one source is loaded once; the rest are 'duplicate'."""
    unique, seen, duplicates = [], set(), []
    for lf, fmt, defaults in landed:
        key = (lf.source_name, lf.file_sha256)
        if key in seen:
            duplicates.append(FileOutcome(
                lf.source_name, fmt, "", lf.file_sha256, lf.original_path, lf.first_seen_at, "duplicate",
                "same content as a file already loaded for this source", 0, 0, 0, None, None))
        else:
            seen.add(key)
            unique.append((lf, fmt, defaults))
    return unique, duplicates


def _tampered(item: tuple[LandedFile, str, dict], problem: str) -> FileOutcome:
    """A landed file whose bytes changed after landing: rejected, never staged or published."""
    lf, fmt, _ = item
    return FileOutcome(lf.source_name, fmt, ADAPTERS[fmt].table, lf.file_sha256, lf.original_path,
                       lf.first_seen_at, "rejected", f"LANDED_FILE_CHANGED: {problem}", 0, 0, 0, None, None)



def ingest(sources: list[Source], root: Path, build_dir: Path, warehouse_name: str,
           now: str) -> tuple[list[FileOutcome], set[str], versions.Lifecycle, list[FileOutcome]]:
    """Fetch, land and stage every declared file (staged Parquet reused from the cache when it proves
    itself); returns every file's outcome, the cache keys in use, the file lifecycle after this read,
    and the failed fetches (also among the outcomes)."""
    log = get_run_logger()
    fetched, fetch_failures = fetch_sources(sources, str(build_dir / "downloads"), now)
    for failure in fetch_failures:
        log.warning("fetch failed for source %s (%s): %s", failure.source_name, failure.original_path,
                    failure.reason)
    landed, reads = land_sources(sources, str(root / "landing"), now, fetched)
    lifecycle = versions.record_reads(
        versions.read_state(versions.state_path(root / "landing", warehouse_name)),
        [lf for lf, _, _ in landed], reads, now)
    unique, duplicates = _dedupe(landed)
    log.info("landed %d file(s) from %d source(s)", len(unique), len(sources))
    # Files staged by an earlier refresh (same bytes, settings and code) are not parsed again.
    # One cache per warehouse file: its writer lock covers the prune after publishing.
    staged, keys = stage_cached(unique, root / "staged-cache" / warehouse_name, build_dir)
    return staged + duplicates + fetch_failures, keys, lifecycle, fetch_failures


def stage_cached(unique: list[tuple[LandedFile, str, dict]], cache_dir: Path,
                 build_dir: Path) -> tuple[list[FileOutcome], set[str]]:
    """Each file's outcome: from the cache when its entry proves itself, else staged (and cached) now."""
    log = get_run_logger()
    fingerprint = stage_cache.code_fingerprint()
    by_key = {stage_cache.cache_key(lf, fmt, defaults, fingerprint): (lf, fmt, defaults)
              for lf, fmt, defaults in unique}
    problems: list[str] = []
    cached = {key: hit for key, (lf, _, _) in by_key.items()
              if (hit := stage_cache.lookup(cache_dir, key, lf.file_sha256, problems))}
    for problem in problems:
        log.warning("%s", problem)
    # A landed file is staged only while it still has the bytes it was landed with.
    todo, tampered = [], []
    for key, item in by_key.items():
        if key not in cached:
            problem = verify_landed(item[0])
            if problem is None:
                todo.append((key, item))
            else:
                tampered.append(_tampered(item, problem))
    log.info("%d file(s) to stage, %d already staged", len(todo), len(cached))
    sizes = {key: Path(item[0].landed_path).stat().st_size for key, item in todo}
    groups = batches(todo, os.cpu_count() or 1, fmt=lambda pair: pair[1][1], size_of=lambda pair: sizes[pair[0]])
    todo_bytes = sum(sizes.values())
    with stage_pool.processes(stage_pool.wanted(todo_bytes)):
        futures = [stage_batch.submit(group, str(build_dir / "staged")) for group in groups]
        done = len(cached) + len(tampered)
        progress.stage("parse + validate", done, len(unique))
        for future in futures:
            for key, outcome in future.result():
                cached[key] = stage_cache.store(cache_dir, key, by_key[key][0].file_sha256, outcome)
                done += 1
            progress.stage("parse + validate", done, len(unique))
    return [cached[key] for key in by_key if key in cached] + tampered, set(by_key)

"""The refresh flow: land → parse → validate → load → SQL models → checks → publish."""
import datetime as dt
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.tasks import exponential_backoff
from prefect.states import Failed

from flows import progress
from flows.ingest.adapters import ADAPTERS
from flows.ingest.fetch_sources import Fetched, fetch_url_source, unexpected_failure
from flows.ingest.land import LandedFile, land_file, read_index, read_index_by_key, verify_landed
from flows.ingest.sources import Source, load_sources
from flows.ingest import stage_cache, stage_pool, versions
from flows.ingest.stage import FileOutcome
from flows.ingest.stage_pool import stage_files
from flows.ingest.workloads import load_workloads
from flows.task_runners import make_task_runner
from flows.load import build_fingerprint, can_load_incrementally, forget_validations, load_reference, load_staged
from flows.load_validations import load_validations, validation_benchmark_sources
from flows.quality.gate import quality_gate
from provider_eval import sql_compiled, sql_layer, warehouse
from provider_eval.errors import ProviderEvalError, RefreshFailed
from provider_eval.paths import DEFAULT_SOURCES, DEFAULT_WAREHOUSE, DEFAULT_WORKLOADS, REFERENCE_DIR, SQL_DIR

PUBLIC_TABLES = (
    "offers", "offer_history", "benchmark_runs", "benchmark_requests", "compat_checks", "memory_fit",
    "hardware_validations", "workload_costs", "rankings", "quarantine", "ingest_manifest",
    "estimate_rankings", "ranking_sensitivity", "closest_runs", "input_files",
)


@dataclass
class RefreshSummary:
    """What a refresh did, for the CLI and for tests."""

    warehouse: str
    files: int = 0
    files_rejected: int = 0
    rows_in: int = 0
    rows_accepted: int = 0
    rows_quarantined: int = 0
    table_rows: dict = field(default_factory=dict)
    # Per declared source: {"files", "loaded", "rejected", "rows_in", "rows_accepted",
    # "rows_quarantined", "fetch": "ok" | "failed" | None (not a url source)}.
    sources: dict = field(default_factory=dict)
    # Whole files rejected (unreadable, tampered) and failed fetches: {"source", "path", "reason"}.
    rejected_files: list = field(default_factory=list)
    failed_fetches: list = field(default_factory=list)


def _per_source(sources: list[Source], outcomes: list[FileOutcome], fetch_failed: set[str]) -> dict:
    """What each declared source contributed to this refresh."""
    out = {}
    for source in sources:
        mine = [o for o in outcomes if o.source_name == source.name]
        out[source.name] = {
            "files": len(mine), "loaded": sum(o.status == "loaded" for o in mine),
            "rejected": sum(o.status == "rejected" for o in mine),
            "rows_in": sum(o.rows_in for o in mine), "rows_accepted": sum(o.rows_accepted for o in mine),
            "rows_quarantined": sum(o.rows_quarantined for o in mine),
            "fetch": None if source.url is None else ("failed" if source.name in fetch_failed else "ok"),
        }
    return out


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
def land_sources(sources: list[Source], landing_dir: str, now: str,
                 fetched: list[Fetched] | None = None) -> tuple[list[tuple[LandedFile, str, dict]], dict]:
    """Copy each declared file (and each downloaded body) into the landing store.

    Returns every landed file of these sources, and what this refresh read: source → {path: sha256}
    (a `url:` source whose fetch failed reads nothing). Landing is idempotent, so a retry after an
    I/O error (a full disk freed, an NFS hiccup) lands only what is missing.
    """
    when = dt.datetime.fromisoformat(now)
    known = read_index_by_key(Path(landing_dir))
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
                           companions=companions_of(path) if companions_of else [], known=known)
            reads[source.name][str(path)] = lf.file_sha256
    by_name = {s.name: s for s in sources}
    return [(lf, by_name[lf.source_name].format, by_name[lf.source_name].adapter_options())
            for lf in read_index(Path(landing_dir)) if lf.source_name in by_name], reads


@task
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


def batches(unique: list, workers: int, fmt=lambda item: item[1]) -> list[list]:
    """Files grouped by format (one adapter and contract per batch), about 2 batches per worker each."""
    by_format: dict[str, list] = {}
    for item in unique:
        by_format.setdefault(fmt(item), []).append(item)
    out = []
    for items in by_format.values():
        size = max(1, min(MAX_FILES_PER_BATCH, -(-len(items) // (2 * workers))))
        out += [items[i:i + size] for i in range(0, len(items), size)]
    return out


def _start_from_published(published: Path, build_path: Path, fingerprint: str) -> bool:
    """Copy the published warehouse in as the build's start; False (and no copy) when there is none
    or it was built by other code or reference data (then the build starts empty)."""
    if not warehouse.copy_published(published, build_path):
        return False
    with warehouse.connect(build_path) as con:
        usable = can_load_incrementally(con, fingerprint)
    if not usable:
        build_path.unlink()
    return usable


@task
def build(outcomes: list[FileOutcome], workloads_file: str, build_dir: str, sql_dir: str, now: str,
          validations_dir: str | None = None, file_versions: list[dict] = (),
          dbt_target_dir: str | None = None, published: str | None = None,
          full: bool = False) -> tuple[str, str | None]:
    """Load the inputs into the warehouse being built, build the SQL models and run the checks.

    The build starts from a copy of the published warehouse (published) and loads only what changed,
    unless full or the copy cannot serve (docs/production.md): then it starts from an empty file.
    Returns (build path, problem): expected failures come back as text, not exceptions, so the
    flow can fail cleanly without a traceback in the logs.
    """
    build_path = Path(build_dir) / "warehouse.duckdb"
    workloads_parquet = Path(build_dir) / "workloads.parquet"
    load_workloads(Path(workloads_file)).write_parquet(workloads_parquet)
    fingerprint = build_fingerprint(Path(sql_dir))
    incremental = not full and published is not None and _start_from_published(Path(published), build_path, fingerprint)
    with warehouse.connect_build(build_path, Path(build_dir) / "spill") as con:
        load_reference(con, REFERENCE_DIR)
        loaded = load_staged(con, outcomes, workloads_parquet, now, file_versions, incremental=incremental,
                             fingerprint=fingerprint)
        if incremental:
            forget_validations(con)
        for path, reason in load_validations(con, Path(validations_dir or Path(build_dir) / "no-validations")):
            get_run_logger().warning("validation evidence %s not loaded: %s", path, reason)
    get_run_logger().info("%s build: %d file(s) loaded, %d removed, %d source(s) with changed file states",
                          "incremental" if incremental else "full", loaded["files_added"],
                          loaded["files_removed"], loaded["sources_changed"])
    log = get_run_logger()
    finished = 0

    def node_done(node: sql_layer.NodeResult) -> None:
        nonlocal finished
        finished += 1
        log.info("%s %s: %s in %.2f s", "SQL model" if node.resource_type == "model" else "check",
                 node.name, node.status, node.seconds)
        progress.stage("load + SQL models + checks", finished, None)

    # No spill folder for dbt: DuckDB may still hold the loaders' instance of this file (spilling
    # into build_dir/spill) and refuses to switch a used one; a fresh instance spills into
    # <build file>.tmp. Both are inside build_dir, removed with it.
    built = sql_layer.build(build_path, Path(sql_dir), Path(build_dir) / "dbt", warehouse.BUILD_MEMORY_LIMIT,
                            None, target_dir=Path(dbt_target_dir) if dbt_target_dir else None,
                            on_node=node_done, full_refresh=not incremental)
    if built.problem:
        return str(build_path), built.problem
    # Only a full build's manifest: an incremental one compiled the incremental branches, which
    # read the build's own tables and would not run where check-fit runs the compiled SQL.
    if dbt_target_dir and not incremental:
        sql_compiled.keep_manifest(Path(dbt_target_dir), Path(sql_dir))
    log.info("built %d SQL models and passed %d checks in %.1f s (slowest: %s)", len(built.models),
             len(built.nodes) - len(built.models), sum(n.seconds for n in built.nodes), sql_layer.slowest(built.models))
    return str(build_path), None


@task
def publish(build_path: str, published: str) -> dict:
    """Swap the checked build in as the published warehouse; return public table row counts."""
    warehouse.publish(Path(build_path), Path(published))
    with warehouse.connect_published(Path(published)) as con:
        return {t: con.execute(f'select count(*) from "{t}"').fetchone()[0] for t in PUBLIC_TABLES}


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


def _sweep_builds(builds: Path, warehouse_name: str) -> None:
    """Remove this warehouse's build folders a killed refresh left behind (hold the writer lock)."""
    if builds.is_dir():
        for leftover in builds.glob(f"{warehouse_name}.*"):
            shutil.rmtree(leftover, ignore_errors=True)


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
    groups = batches(todo, os.cpu_count() or 1, fmt=lambda pair: pair[1][1])
    todo_bytes = sum(Path(item[0].landed_path).stat().st_size for _, item in todo)
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


def run_refresh(sources_file: Path, workloads_file: Path, warehouse_file: Path, sql_dir: Path,
                full: bool = False) -> RefreshSummary:
    """The refresh's steps, in order (the flow wraps this so failures become a Failed state).

    full: rebuild the warehouse from nothing instead of from the published one (same rows)."""
    log = get_run_logger()
    now = dt.datetime.now(dt.timezone.utc).isoformat()
    sources = load_sources(sources_file)
    load_workloads(workloads_file)  # fail fast, before any work, on a malformed workloads file
    root = warehouse_file.parent
    sources += validation_benchmark_sources(root / "validations")
    # One build folder per warehouse, at the same path every time: only the writer-lock holder
    # builds, and dbt's parse state (kept in .dbt/) stays valid only while its database path does.
    build_dir = root / ".build" / f"{warehouse_file.name}.build"
    with warehouse.writer_lock(warehouse_file):
        # The build folder is removed before the lock is released: the next refresh waiting for the
        # lock builds in the same folder.
        try:
            # Only the lock holder builds, so anything left in .build is a killed refresh's debris.
            _sweep_builds(root / ".build", warehouse_file.name)
            build_dir.mkdir(parents=True)
            progress.stage("fetch + land")
            outcomes, keys, lifecycle, fetch_failures = ingest(sources, root, build_dir, warehouse_file.name, now)
            for o in outcomes:
                if o.status == "rejected":
                    log.warning("rejected %s (source %s): %s", o.original_path, o.source_name, o.reason)
            progress.stage("load + SQL models + checks")
            build_path, problem = build(outcomes, str(workloads_file), str(build_dir), str(sql_dir), now,
                                        str(root / "validations"),
                                        versions.version_rows(lifecycle, {s.name for s in sources}),
                                        str(root / ".dbt" / warehouse_file.name), str(warehouse_file), full)
            if problem:
                raise RefreshFailed(f"{problem}\nNothing was published; the previous warehouse stays published.")
            progress.stage("quality gate")
            quality_gate(build_path, str(root / "data_docs"))
            progress.stage("publish")
            table_rows = publish(build_path, str(warehouse_file))
            # Reads count once the refresh published: a failed build re-run must not count them twice.
            versions.write_state(versions.state_path(root / "landing", warehouse_file.name), lifecycle)
            stage_cache.prune(root / "staged-cache" / warehouse_file.name, keys)
        finally:
            shutil.rmtree(build_dir, ignore_errors=True)
    summary = RefreshSummary(
        warehouse=str(warehouse_file),
        files=len(outcomes),
        files_rejected=sum(o.status == "rejected" for o in outcomes),
        rows_in=sum(o.rows_in for o in outcomes),
        rows_accepted=sum(o.rows_accepted for o in outcomes),
        rows_quarantined=sum(o.rows_quarantined for o in outcomes),
        table_rows=table_rows,
        sources=_per_source(sources, outcomes, {f.source_name for f in fetch_failures}),
        rejected_files=[{"source": o.source_name, "path": o.original_path, "reason": o.reason}
                        for o in outcomes if o.status == "rejected" and id(o) not in {id(f) for f in fetch_failures}],
        failed_fetches=[{"source": o.source_name, "path": o.original_path, "reason": o.reason}
                        for o in fetch_failures],
    )
    log.info("published %s: %s", warehouse_file, summary.table_rows)
    return summary


@flow(name="refresh-pricing", log_prints=False, task_runner=make_task_runner("threads"))
def refresh(
    sources: str = str(DEFAULT_SOURCES),
    workloads: str = str(DEFAULT_WORKLOADS),
    warehouse_path: str = str(DEFAULT_WAREHOUSE),
    sql_dir: str = str(SQL_DIR),
    full: bool = False,
):
    """Refresh the warehouse from the declared inputs (full: rebuilt from nothing) and publish it if every check passes."""
    try:
        # Relative paths are the caller's working directory's, made absolute once, here.
        return run_refresh(*(Path(p).expanduser().absolute() for p in (sources, workloads, warehouse_path, sql_dir)),
                           full=full)
    except ProviderEvalError as exc:
        # An expected failure (bad config, failed checks): a Failed state with a readable message,
        # not a traceback. The previous warehouse is untouched.
        return Failed(message=str(exc), data=exc)

"""The refresh flow: land → parse → validate → load → SQL models → checks → publish."""
import datetime as dt
import os
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.states import Failed

from flows import progress
from flows.ingest.adapters import ADAPTERS
from flows.ingest.fetch_sources import Fetched, fetch_url_sources
from flows.ingest.land import LandedFile, land_file, read_index, read_index_by_key
from flows.ingest.sources import Source, load_sources
from flows.ingest import stage_cache, stage_pool
from flows.ingest.stage import FileOutcome
from flows.ingest.stage_pool import stage_files
from flows.ingest.workloads import load_workloads
from flows.task_runners import make_task_runner
from flows.load import load_reference, load_staged
from flows.load_validations import load_validations, validation_benchmark_sources
from flows.quality.gate import quality_gate
from provider_eval import sql_models, warehouse
from provider_eval.errors import ProviderEvalError, RefreshFailed, SqlModelError
from provider_eval.paths import DEFAULT_SOURCES, DEFAULT_WAREHOUSE, DEFAULT_WORKLOADS, REFERENCE_DIR, SQL_DIR

PUBLIC_TABLES = (
    "offers", "offer_history", "benchmark_runs", "benchmark_requests", "compat_checks", "memory_fit",
    "hardware_validations", "workload_costs", "rankings", "quarantine", "ingest_manifest",
    "estimate_rankings", "ranking_sensitivity", "closest_runs",
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


@task
def fetch_sources(sources: list[Source], downloads_dir: str, now: str) -> tuple[list[Fetched], list[FileOutcome]]:
    """Download the `url:` sources; each failure is a rejected manifest row, not a failed refresh."""
    return fetch_url_sources(sources, Path(downloads_dir), now)


@task
def land_sources(sources: list[Source], landing_dir: str, now: str,
                 fetched: list[Fetched] | None = None) -> list[tuple[LandedFile, str, dict]]:
    """Copy each declared file (and each downloaded body) into the landing store; return every landed file of these sources."""
    when = dt.datetime.fromisoformat(now)
    known = read_index_by_key(Path(landing_dir))
    for body in fetched or []:
        land_file(body.source_name, body.body_path, Path(landing_dir), when, original=body.url, known=known)
    for source in sources:
        if source.url is not None:
            continue
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
            land_file(source.name, path, Path(landing_dir), when,
                      companions=companions_of(path) if companions_of else [], known=known)
    by_name = {s.name: s for s in sources}
    return [(lf, by_name[lf.source_name].format, by_name[lf.source_name].adapter_options())
            for lf in read_index(Path(landing_dir)) if lf.source_name in by_name]


@task
def stage_batch(batch: list[tuple[LandedFile, str, dict]], staging_dir: str) -> list[FileOutcome]:
    """Parse and validate several landed files of one format into Parquet (one task, one contract check)."""
    return stage_files(batch, Path(staging_dir))


# Files per staging task at most: thousands of one-file tasks cost Prefect more than the parsing
# (make bench, 2,000 scrape files), while enough batches remain to keep every worker busy.
MAX_FILES_PER_BATCH = 64


def batches(unique: list[tuple[LandedFile, str, dict]], workers: int) -> list[list[tuple[LandedFile, str, dict]]]:
    """Files grouped by format (one adapter and contract per batch), about 2 batches per worker each."""
    by_format: dict[str, list] = {}
    for item in unique:
        by_format.setdefault(item[1], []).append(item)
    out = []
    for items in by_format.values():
        size = max(1, min(MAX_FILES_PER_BATCH, -(-len(items) // (2 * workers))))
        out += [items[i:i + size] for i in range(0, len(items), size)]
    return out


@task
def build(outcomes: list[FileOutcome], workloads_file: str, build_dir: str, sql_dir: str, now: str,
          validations_dir: str | None = None) -> tuple[str, str | None]:
    """Load everything into a new warehouse file, build the SQL models and run the checks.

    Returns (build path, problem): expected failures come back as text, not exceptions, so the
    flow can fail cleanly without a traceback in the logs.
    """
    build_path = Path(build_dir) / "warehouse.duckdb"
    workloads_parquet = Path(build_dir) / "workloads.parquet"
    load_workloads(Path(workloads_file)).write_parquet(workloads_parquet)
    with warehouse.connect_build(build_path, Path(build_dir) / "spill") as con:
        load_reference(con, REFERENCE_DIR)
        load_staged(con, outcomes, workloads_parquet, now)
        for path, reason in load_validations(con, Path(validations_dir or Path(build_dir) / "no-validations")):
            get_run_logger().warning("validation evidence %s not loaded: %s", path, reason)
        try:
            builds = sql_models.build_models(con, Path(sql_dir))
        except SqlModelError as exc:
            return str(build_path), str(exc)
        get_run_logger().info("built %d SQL models in %.1f s (slowest: %s)", len(builds),
                              sum(b.seconds for b in builds), sql_models.slowest(builds))
        failures = sql_models.run_checks(con, Path(sql_dir))
    if failures:
        lines = [f"  {f.name}: {f.rows} offending row(s), e.g. {f.sample[0]}" for f in failures]
        return str(build_path), "checks failed:\n" + "\n".join(lines)
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


def _sweep_builds(builds: Path, warehouse_name: str) -> None:
    """Remove this warehouse's build folders a killed refresh left behind (hold the writer lock)."""
    if builds.is_dir():
        for leftover in builds.glob(f"{warehouse_name}.*"):
            shutil.rmtree(leftover, ignore_errors=True)


def run_refresh(sources_file: Path, workloads_file: Path, warehouse_file: Path, sql_dir: Path) -> RefreshSummary:
    """The refresh's steps, in order (the flow wraps this so failures become a Failed state)."""
    log = get_run_logger()
    now = dt.datetime.now(dt.timezone.utc).isoformat()
    sources = load_sources(sources_file)
    load_workloads(workloads_file)  # fail fast, before any work, on a malformed workloads file
    root = warehouse_file.parent
    sources += validation_benchmark_sources(root / "validations")
    build_dir = root / ".build" / f"{warehouse_file.name}.{uuid.uuid4().hex}"
    try:
        with warehouse.writer_lock(warehouse_file):
            # Only the lock holder builds, so anything left in .build is a killed refresh's debris.
            _sweep_builds(root / ".build", warehouse_file.name)
            build_dir.mkdir(parents=True)
            progress.stage("fetch + land")
            fetched, fetch_failures = fetch_sources(sources, str(build_dir / "downloads"), now)
            for failure in fetch_failures:
                log.warning("fetch failed for source %s (%s): %s", failure.source_name, failure.original_path,
                            failure.reason)
            landed = land_sources(sources, str(root / "landing"), now, fetched)
            unique, duplicates = _dedupe(landed)
            log.info("landed %d file(s) from %d source(s)", len(unique), len(sources))
            # Files staged by an earlier refresh (same bytes, settings and code) are not parsed again.
            # One cache per warehouse file: its writer lock covers the prune below.
            cache_dir = root / "staged-cache" / warehouse_file.name
            fingerprint = stage_cache.code_fingerprint()
            keys = [stage_cache.cache_key(lf, fmt, defaults, fingerprint) for lf, fmt, defaults in unique]
            cached = {i: hit for i, key in enumerate(keys) if (hit := stage_cache.lookup(cache_dir, key))}
            todo = [i for i in range(len(unique)) if i not in cached]
            log.info("%d file(s) to stage, %d already staged", len(todo), len(cached))
            groups = batches([unique[i] for i in todo], os.cpu_count() or 1)
            todo_bytes = sum(Path(unique[i][0].landed_path).stat().st_size for i in todo)
            with stage_pool.processes(stage_pool.wanted(todo_bytes)):
                futures = [stage_batch.submit(group, str(build_dir / "staged")) for group in groups]
                progress.stage("parse + validate", len(cached), len(unique))
                fresh = []
                for future in futures:
                    fresh += future.result()
                    progress.stage("parse + validate", len(cached) + len(fresh), len(unique))
            for i, outcome in zip(todo, fresh):
                cached[i] = stage_cache.store(cache_dir, keys[i], outcome)
            staged = [cached[i] for i in range(len(unique))]
            outcomes = staged + duplicates + fetch_failures
            for o in outcomes:
                if o.status == "rejected":
                    log.warning("rejected %s (source %s): %s", o.original_path, o.source_name, o.reason)
            progress.stage("load + SQL models + checks")
            build_path, problem = build(outcomes, str(workloads_file), str(build_dir), str(sql_dir), now,
                                        str(root / "validations"))
            if problem:
                raise RefreshFailed(f"{problem}\nNothing was published; the previous warehouse stays published.")
            progress.stage("quality gate")
            quality_gate(build_path, str(root / "data_docs"))
            progress.stage("publish")
            table_rows = publish(build_path, str(warehouse_file))
            stage_cache.prune(cache_dir, set(keys))
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
    )
    log.info("published %s: %s", warehouse_file, summary.table_rows)
    return summary


@flow(name="refresh-pricing", log_prints=False, task_runner=make_task_runner("threads"))
def refresh(
    sources: str = str(DEFAULT_SOURCES),
    workloads: str = str(DEFAULT_WORKLOADS),
    warehouse_path: str = str(DEFAULT_WAREHOUSE),
    sql_dir: str = str(SQL_DIR),
):
    """Rebuild the warehouse from the declared inputs and publish it if every check passes."""
    try:
        return run_refresh(Path(sources), Path(workloads), Path(warehouse_path), Path(sql_dir))
    except ProviderEvalError as exc:
        # An expected failure (bad config, failed checks): a Failed state with a readable message,
        # not a traceback. The previous warehouse is untouched.
        return Failed(message=str(exc), data=exc)

"""The refresh flow: land → parse → validate → load → SQL models → checks → publish."""
import datetime as dt
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
from prefect import flow, get_run_logger, task
from prefect.states import Failed
from prefect.utilities.annotations import quote

from flows.ingest.sources import Source, load_sources
from flows.ingest import stage_cache, versions
from flows.ingest.stage import FileOutcome
from flows.ingest.workloads import load_workloads
from flows.task_runners import make_task_runner
from flows import input_changes
from flows.load import build_fingerprint, can_load_incrementally, holds_inputs, load_reference, load_staged
from flows.load_validations import validation_sources
from flows.quality.gate import quality_gate, unchanged_since_passed
from flows.stage_inputs import ingest
from provider_eval import progress, sql_compiled, sql_layer, warehouse
from provider_eval.errors import ProviderEvalError, RefreshFailed
from provider_eval.paths import DEFAULT_SOURCES, DEFAULT_WAREHOUSE, DEFAULT_WORKLOADS, REFERENCE_DIR, SQL_DIR
from provider_eval.settings import get_settings

PUBLIC_TABLES = (
    "offers", "offer_history", "benchmark_runs", "benchmark_requests", "compat_checks", "memory_fit",
    "hardware_validations", "validation_checks", "workload_costs", "rankings", "quarantine", "ingest_manifest",
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


def _usable_start(build_path: Path, fingerprint: str) -> bool:
    """Whether the file moved or copied in as the build's start can be built on; dropped if not: built
    by other code or reference data, or locked by a reader in another process (a kept previous file)."""
    try:
        with warehouse.connect(build_path) as con:
            usable = can_load_incrementally(con, fingerprint)
    except duckdb.Error:
        usable = False
    if not usable:
        build_path.unlink()
    return usable


def _published_holds(published: Path, outcomes: list[FileOutcome], file_versions: list[dict]) -> bool:
    """Whether the published warehouse holds exactly these staged files in these states (nothing new)."""
    try:
        with warehouse.connect_published(published) as con:
            return holds_inputs(con, outcomes, file_versions)
    except duckdb.Error:  # built by older code (other raw tables): not the same inputs
        return False


def _start(published: Path, build_path: Path, fingerprint: str, outcomes: list[FileOutcome],
           file_versions: list[dict]) -> str | None:
    """Bring in the build's start (docs/production.md, step 1): 'previous' (the file the last publish
    replaced, moved in), 'copy' (a copy of the published file) or None (start empty).

    The previous file is one refresh behind, so building on it redoes the last refresh's changes
    too; when nothing is new since the published warehouse, copying that costs less."""
    if (get_settings("keep_previous_warehouse").keep_previous_warehouse and published.is_file()
            and not _published_holds(published, outcomes, file_versions)
            and warehouse.take_previous(published, build_path) and _usable_start(build_path, fingerprint)):
        return "previous"
    if warehouse.copy_published(published, build_path) and _usable_start(build_path, fingerprint):
        return "copy"
    return None


@task
def build(outcomes: list[FileOutcome], workloads_parquet: str, build_dir: str, sql_dir: str, now: str,
          file_versions: list[dict] = (), dbt_target_dir: str | None = None, published: str | None = None,
          full: bool = False) -> tuple[str, str | None, bool]:
    """Load the inputs (the workloads as run_refresh read them) into the warehouse being built, build
    the SQL models and run the checks.

    The build starts from the published warehouse (published: the file it replaced, or a copy of it)
    and loads only what changed, unless full or neither can serve (docs/production.md): then it
    starts from an empty file.
    Returns (build path, problem, gated_unchanged): expected failures come back as text, not
    exceptions, so the flow can fail cleanly without a traceback in the logs; gated_unchanged:
    nothing the quality gate validates can differ from the published warehouse (gate.unchanged_since_passed).
    """
    build_path = Path(build_dir) / "warehouse.duckdb"
    fingerprint = build_fingerprint(Path(sql_dir))
    start = None if full or published is None else _start(Path(published), build_path, fingerprint, outcomes,
                                                          file_versions)
    incremental = start is not None
    with warehouse.connect_build(build_path, Path(build_dir) / "spill") as con:
        # What the start held, to tell which inputs this load changed (an incremental build runs dbt on
        # what they reach only; the other models' tables stay as they were).
        before = input_changes.content_hashes(con) if incremental else None
        load_reference(con, REFERENCE_DIR)
        loaded = load_staged(con, outcomes, Path(workloads_parquet), now, file_versions, incremental=incremental,
                             fingerprint=fingerprint, started_from=start or "empty")
        changed = (input_changes.changed_inputs(before, input_changes.content_hashes(con), loaded["tables_changed"])
                   if incremental else None)
        # The clock and the reads move every refresh; what they alone reach runs only if they change a row.
        changed, reads_settled = input_changes.settled(con, changed) if incremental else (None, False)
    get_run_logger().info("%s build: %d file(s) loaded, %d removed, %d file(s) whose state changed%s%s",
                          {"previous": "incremental (from the previous published warehouse)",
                           "copy": "incremental (from a copy of the published warehouse)"}.get(start, "full"),
                          loaded["files_added"],
                          loaded["files_removed"], loaded["files_state_changed"],
                          f"; changed inputs: {', '.join(sorted(changed)) or 'none'}" if incremental else "",
                          "; this refresh's reads flag no unlisted offer" if reads_settled else "")
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
                            on_node=node_done, full_refresh=not incremental, changed_inputs=changed,
                            reads_settled=reads_settled)
    if built.memory_reruns:  # the build still succeeded; the log says why it took longer
        log.warning("%d SQL model(s) ran out of memory side by side and were built again one at a time: %s",
                    len(built.memory_reruns), ", ".join(f"{n.name} ({n.seconds:.1f} s lost)" for n in built.memory_reruns))
    if built.problem:
        return str(build_path), built.problem, False
    # Only a full build's manifest: an incremental one compiled the incremental branches, which
    # read the build's own tables and would not run where check-fit runs the compiled SQL.
    if dbt_target_dir and not incremental:
        sql_compiled.keep_manifest(Path(dbt_target_dir), Path(sql_dir))
    log.info("built %d SQL models (%d kept unchanged: no changed input reaches them) and passed %d checks "
             "in %.1f s (slowest: %s)", len(built.models), built.kept, len(built.nodes) - len(built.models),
             sum(n.seconds for n in built.nodes), sql_layer.slowest(built.models))
    # Only a copy starts from what the published warehouse's passed gate validated.
    return str(build_path), None, start == "copy" and unchanged_since_passed(changed, reads_settled,
                                                                             loaded["files_state_changed"])


@task
def publish(build_path: str, published: str) -> dict:
    """Swap the checked build in as the published warehouse; return public table row counts."""
    # The replaced file is kept for the next build (warehouse.previous_path) unless that is turned off;
    # a file dropped is removed in the background, linked in the build folder meanwhile (the next
    # refresh's sweep removes it if this process dies first).
    warehouse.publish(Path(build_path), Path(published), retired_dir=Path(published).parent / ".build",
                      keep_previous=get_settings("keep_previous_warehouse").keep_previous_warehouse)
    with warehouse.connect_published(Path(published)) as con:
        return {t: con.execute(f'select count(*) from "{t}"').fetchone()[0] for t in PUBLIC_TABLES}


def _sweep_builds(builds: Path, warehouse_name: str) -> None:
    """Remove this warehouse's build folders and retired files a killed refresh left behind (hold the writer lock)."""
    if builds.is_dir():
        for leftover in builds.glob(f"{warehouse_name}.*"):
            if leftover.is_dir() and not leftover.is_symlink():
                shutil.rmtree(leftover, ignore_errors=True)
            else:  # a replaced warehouse whose removal a killed refresh cut short (warehouse.publish)
                leftover.unlink(missing_ok=True)


def run_refresh(sources_file: Path, workloads_file: Path, warehouse_file: Path, sql_dir: Path,
                full: bool = False) -> RefreshSummary:
    """The refresh's steps, in order (the flow wraps this so failures become a Failed state).

    full: rebuild the warehouse from nothing instead of from the published one (same rows)."""
    log = get_run_logger()
    now = dt.datetime.now(dt.timezone.utc).isoformat()
    sources = load_sources(sources_file)
    # Read once, before any work: a malformed workloads file fails fast; the build loads this frame.
    workloads = load_workloads(workloads_file)
    root = warehouse_file.parent
    sources += validation_sources(root / "validations")
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
            workloads.write_parquet(build_dir / "workloads.parquet")
            progress.stage("fetch + land")
            outcomes, keys, lifecycle, fetch_failures = ingest(sources, root, build_dir, warehouse_file.name, now)
            for o in outcomes:
                if o.status == "rejected":
                    log.warning("rejected %s (source %s): %s", o.original_path, o.source_name, o.reason)
            progress.stage("load + SQL models + checks")
            # quote: Prefect would otherwise visit every outcome and version row looking for futures
            # to resolve (thousands of dataclasses and dicts: 1.5-3 s of every refresh at SCALE=default).
            build_path, problem, gated_unchanged = build(quote(outcomes), str(build_dir / "workloads.parquet"), str(build_dir),
                                        str(sql_dir), now,
                                        quote(versions.version_rows(lifecycle, {s.name for s in sources})),
                                        str(root / ".dbt" / warehouse_file.name), str(warehouse_file), full)
            if problem:
                raise RefreshFailed(f"{problem}\nNothing was published; the previous warehouse stays published.")
            progress.stage("quality gate")
            data_docs = root / "data_docs"
            if gated_unchanged and (data_docs / "index.html").is_file():
                log.info("quality gate: nothing it validates changed since the published warehouse passed it "
                         "(only the files' reads and last-seen times moved); Data Docs kept: %s", data_docs / "index.html")
            else:
                quality_gate(build_path, str(data_docs))
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

"""Shared test setup: a private Prefect home (ephemeral API, no telemetry) and refresh helpers."""
import contextlib
import datetime as dt
import fcntl
import os
import shutil
import tempfile

# Before Prefect is imported anywhere: each test session gets its own Prefect database, so runs
# never collide with a developer's ~/.prefect or with another session on the same machine.
os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="provider-eval-prefect-")
os.environ.pop("PREFECT_API_URL", None)
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ["DO_NOT_TRACK"] = "1"
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
# dbt's parsed and compiled projects go to a cache of this run, never the developer's: a stale or
# foreign cache entry can neither hide nor cause a failure. The first process to import this file
# (pytest itself, or xdist's controller) makes it; the workers and subprocesses inherit it.
if "PROVIDER_EVAL_TEST_RUN_CACHE" not in os.environ:
    os.environ["PROVIDER_EVAL_TEST_RUN_CACHE"] = tempfile.mkdtemp(prefix="provider-eval-test-cache-")
os.environ["PROVIDER_EVAL_CACHE_DIR"] = os.environ["PROVIDER_EVAL_TEST_RUN_CACHE"]

from provider_eval import quiet_exit  # noqa: E402

quiet_exit.install()

# pandera imports its hypothesis strategies lazily on first validation, which here happens in
# Prefect's worker threads; under pytest's import-time assertion rewriting, concurrent first
# imports can trip CPython 3.11's "AST constructor recursion depth mismatch". Import up front.
import pandera.strategies.base_strategies  # noqa: E402,F401
from pathlib import Path  # noqa: E402

import duckdb  # noqa: E402
import pytest  # noqa: E402

from provider_eval.paths import DATA_DIR, DEFAULT_SOURCES, DEFAULT_WORKLOADS, SQL_DIR  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"


def run_refresh(warehouse: Path, sources: Path = DEFAULT_SOURCES, workloads: Path = DEFAULT_WORKLOADS,
                sql_dir: Path = SQL_DIR):
    """Run the real refresh flow; return its final Prefect state."""
    from flows.refresh import refresh

    return refresh(sources=str(sources), workloads=str(workloads), warehouse_path=str(warehouse),
                   sql_dir=str(sql_dir), return_state=True)


def on_one_utc_day(build):
    """build(), and once more if a UTC midnight fell while it ran.

    A refresh costs each dated quote by its age in days: refreshes on either side of a midnight differ
    on purpose, so a comparison of two refreshes (incremental against full, nothing new against the
    last) says nothing then. CI once ran across one. The next midnight is a day away."""
    day = dt.datetime.now(dt.timezone.utc).date()
    built = build()
    return built if dt.datetime.now(dt.timezone.utc).date() == day else build()


def query(warehouse: Path, sql: str, params=None) -> list[tuple]:
    """Read the published warehouse the way an analyst would: a read-only connection."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


@contextlib.contextmanager
def left_as_found(folder: Path):
    """Put a module fixture's folder back as it was when the block ends (a test that refreshes it again)."""
    # Without this, such a test changes what every later test of the module sees: an order dependency.
    backup = folder.with_name(folder.name + ".as-found")
    shutil.copytree(folder, backup, symlinks=True)
    try:
        yield
    finally:
        shutil.rmtree(folder)
        backup.rename(folder)


def write_sources(tmp_path: Path, entries: list[dict]) -> Path:
    """Write a sources.yaml into tmp_path from plain dicts (paths relative to tmp_path)."""
    import yaml

    path = tmp_path / "sources.yaml"
    path.write_text(yaml.safe_dump({"sources": entries}, sort_keys=False), encoding="utf-8")
    return path


def pytest_unconfigure(config):
    """The run's cache goes with the run (once, in the process that made it: not in an xdist worker)."""
    if not hasattr(config, "workerinput"):
        shutil.rmtree(os.environ["PROVIDER_EVAL_TEST_RUN_CACHE"], ignore_errors=True)


@pytest.fixture(scope="session")
def sample_warehouse(tmp_path_factory) -> Path:
    """The bundled sample data refreshed once per run, copied into a private folder for read-only tests.

    Under xdist the first worker to ask refreshes it (the others wait on a lock) and every worker
    gets its own copy of the published folder: one refresh per run, not one per worker.
    """
    mine = tmp_path_factory.mktemp("sample")
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return _refreshed_samples(mine)
    shared = tmp_path_factory.getbasetemp().parent / "sample-warehouse"  # the run's folder, not a worker's
    shared.mkdir(exist_ok=True)
    with open(shared / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        built = shared / "published"
        if not (shared / ".done").exists():
            _refreshed_samples(built)
            (shared / ".done").touch()
    shutil.copytree(built, mine, dirs_exist_ok=True)
    return mine / WAREHOUSE_NAME


WAREHOUSE_NAME = "provider_eval.duckdb"


def _refreshed_samples(folder: Path) -> Path:
    warehouse = folder / WAREHOUSE_NAME
    state = run_refresh(warehouse)
    assert state.is_completed(), state.message
    return warehouse


@pytest.fixture
def data_dir() -> Path:
    """The project's bundled data directory."""
    return DATA_DIR


# The longest files (make test --durations) start first: `make test` hands whole files to two
# workers in collection order (--no-loadscope-reorder: xdist's default order, by number of tests per
# file, ignores this one), and a long file collected last runs alone at the end.
# Order measured 2026-12-02 on the 2-core VM (pytest --junitxml of a full run, seconds per file:
# 497 faults, 441 deployments, 338 validate_host, 332 offer_market_peers (one 50,000-offer build of
# 295 s when beside another worker), 189 cost_model_properties, 182 faults_concurrent, ...).
LONGEST_FILES_FIRST = ("test_faults.py", "test_deployments.py", "test_validate_host.py", "test_offer_market_peers.py",
                       "test_cost_model_properties.py", "test_faults_concurrent.py", "test_scheduled_month.py",
                       "test_quality_gate.py", "test_incremental_refresh.py", "test_cli.py", "test_bench.py",
                       "test_benchmark_matching.py", "test_staging_at_scale.py", "test_adapter_fuzz.py",
                       "test_publish.py", "test_dbt_cache.py", "test_validation_sql.py", "test_lifecycle.py",
                       "test_hostile_probe.py", "test_stage_cache_integrity.py")


def pytest_collection_modifyitems(items):
    """Collect the longest files first (a stable sort: every file keeps its own order)."""
    first = {name: n for n, name in enumerate(LONGEST_FILES_FIRST)}
    items.sort(key=lambda item: first.get(item.path.name, len(first)))

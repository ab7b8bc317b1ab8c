"""Stage big refreshes in worker processes: parsing is Python per file, so threads share one core.

Measured by `make bench` (docs/benchmark.md): staging 3,000 files on threads used about 1.1 of 2
cores (the GIL). A refresh with a lot to stage sends each batch to a process pool instead; a
small one (tests, the demo, a scheduled refresh of a few new files) stays in-process, where the
few seconds it takes to start workers would cost more than they save.
"""
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from flows.ingest import stage

# `auto` (default): processes when there is this much to stage; `1`: always; `0`: never.
ENV = "PROVIDER_EVAL_STAGE_PROCESSES"
AUTO_MIN_BYTES = 256 * 2**20

_pool: ProcessPoolExecutor | None = None


def wanted(landed_bytes: int) -> bool:
    """Whether staging this many bytes should use worker processes."""
    setting = os.environ.get(ENV, "auto").strip().lower()
    if setting in ("0", "no", "false", "off"):
        return False
    if setting in ("1", "yes", "true", "on"):
        return True
    return landed_bytes >= AUTO_MIN_BYTES and (os.cpu_count() or 1) > 1


@contextmanager
def processes(enabled: bool, workers: int | None = None):
    """While open (and enabled), stage_files runs batches in a pool of worker processes."""
    global _pool
    if not enabled:
        yield
        return
    # spawn, not fork: the flow process holds threads (Prefect, DuckDB) that fork would copy mid-state.
    _pool = ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1,
                                mp_context=multiprocessing.get_context("spawn"))
    try:
        yield
    finally:
        pool, _pool = _pool, None
        pool.shutdown(wait=True, cancel_futures=True)


def stage_files(batch: list, staging_dir: Path) -> list[stage.FileOutcome]:
    """flows.ingest.stage.stage_files, in a worker process when a pool is open (same result either way)."""
    pool = _pool
    if pool is None:
        return stage.stage_files(batch, staging_dir)
    return pool.submit(stage.stage_files, batch, staging_dir).result()

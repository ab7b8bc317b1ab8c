"""Stage big refreshes in worker processes: parsing is Python per file, so threads share one core.

Measured by `make bench` (docs/benchmark.md): staging 3,000 files on threads used about 1.1 of 2
cores (the GIL). A refresh with a lot to stage sends each batch to a process pool instead; a
small one (tests, the demo, a scheduled refresh of a few new files) stays in-process, where the
few seconds it takes to start workers would cost more than they save.
"""
import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from pathlib import Path

from flows.ingest import stage
from provider_eval.settings import env_name, get_settings

# PROVIDER_EVAL_STAGE_PROCESSES: `auto` (default): processes when there is this much to stage; `1`: always; `0`: never.
ENV = env_name("stage_processes")
AUTO_MIN_BYTES = 256 * 2**20

_pool: ProcessPoolExecutor | None = None
_workers = 1
_replacing = threading.Lock()


def wanted(landed_bytes: int) -> bool:
    """Whether staging this many bytes should use worker processes."""
    setting = get_settings("stage_processes").stage_processes
    if setting != "auto":
        return setting
    return landed_bytes >= AUTO_MIN_BYTES and (os.cpu_count() or 1) > 1


@contextmanager
def processes(enabled: bool, workers: int | None = None):
    """While open (and enabled), stage_files runs batches in a pool of worker processes."""
    global _pool, _workers
    if not enabled:
        yield
        return
    _workers = workers or os.cpu_count() or 1
    _pool = _new_pool()
    try:
        yield
    finally:
        pool, _pool = _pool, None
        pool.shutdown(wait=True, cancel_futures=True)


def _new_pool() -> ProcessPoolExecutor:
    # spawn, not fork: the flow process holds threads (Prefect, DuckDB) that fork would copy mid-state.
    return ProcessPoolExecutor(max_workers=_workers, mp_context=multiprocessing.get_context("spawn"))


def _submit(batch: list, staging_dir: Path) -> list[stage.FileOutcome]:
    """One batch in the pool; a pool broken by a dead worker is replaced first."""
    global _pool
    pool = _pool
    try:
        future = pool.submit(stage.stage_files, batch, staging_dir)
    except BrokenProcessPool:
        with _replacing:  # batches run on several threads: one of them replaces the broken pool
            if _pool is pool:
                _pool = _new_pool()
                pool.shutdown(wait=False, cancel_futures=True)
            pool = _pool
        future = pool.submit(stage.stage_files, batch, staging_dir)
    return future.result()


def stage_files(batch: list, staging_dir: Path) -> list[stage.FileOutcome]:
    """flows.ingest.stage.stage_files, in a worker process when a pool is open (same result either way).

    A worker that dies (killed, out of memory) or cannot send its result back fails only the file
    that caused it: the batch is retried file by file, and a file that fails alone is rejected
    (WORKER_ERROR), so the refresh goes on.
    """
    if _pool is None:
        return stage.stage_files(batch, staging_dir)
    try:
        return _submit(batch, staging_dir)
    except OSError:
        raise
    except Exception as exc:  # noqa: BLE001 - the per-file error boundary around the worker
        if len(batch) == 1:
            landed, fmt, _ = batch[0]
            name = Path(landed.original_path).name
            return [stage.rejected(landed, fmt, "WORKER_ERROR",
                                   stage.crash("WORKER_ERROR", name, "the worker process staging it", exc).detail)]
    return [outcome for one in batch for outcome in stage_files([one], staging_dir)]

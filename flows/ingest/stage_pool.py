"""Stage big refreshes in worker processes: parsing is Python per file, so threads share one core.

Measured by `make bench` (docs/benchmark.md): staging 3,000 files on threads used about 1.1 of 2
cores (the GIL). A refresh with a lot to stage sends each batch to a process pool instead; a
small one (tests, the demo, a scheduled refresh of a few new files) stays in-process, where the
few seconds it takes to start workers would cost more than they save.
"""
import multiprocessing
import os
import threading
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Callable, Iterator

from flows.ingest import stage
from provider_eval.settings import env_name, get_settings

# PROVIDER_EVAL_STAGE_PROCESSES: `auto` (default): processes when there is this much to stage; `1`: always; `0`: never.
ENV = env_name("stage_processes")
AUTO_MIN_BYTES = 256 * 2**20


def wanted(landed_bytes: int) -> bool:
    """Whether staging this many bytes should use worker processes."""
    setting = get_settings("stage_processes").stage_processes
    if setting != "auto":
        return setting
    return landed_bytes >= AUTO_MIN_BYTES and (os.cpu_count() or 1) > 1


def spawn_executor(workers: int) -> ProcessPoolExecutor:
    """A process pool of this many workers."""
    # spawn, not fork: the flow process holds threads (Prefect, DuckDB) that fork would copy mid-state.
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))


class StagePool:
    """One staging block's worker processes; a pool broken by a dead worker is replaced once, for all."""

    def __init__(self, workers: int, new_executor: Callable[[int], Executor] = spawn_executor):
        self._workers, self._new_executor = workers, new_executor
        self._executor = new_executor(workers)
        self._replacing = threading.Lock()  # batches run on several threads: one of them replaces it

    def run(self, batch: list, staging_dir: Path) -> list[stage.FileOutcome]:
        """stage.stage_files on one batch, in a worker process."""
        executor = self._executor
        try:
            future = executor.submit(stage.stage_files, batch, staging_dir)
        except BrokenProcessPool:
            with self._replacing:
                if self._executor is executor:
                    self._executor = self._new_executor(self._workers)
                    executor.shutdown(wait=False, cancel_futures=True)
                executor = self._executor
            future = executor.submit(stage.stage_files, batch, staging_dir)
        return future.result()

    def shutdown(self) -> None:
        """Stop the workers (batches still queued are cancelled)."""
        self._executor.shutdown(wait=True, cancel_futures=True)


# The pool of the staging block open in this context. A context variable, not a module global:
# Prefect's thread runner runs each task in a copy of the submitting flow's context, so a flow's
# staging tasks see its pool and no other flow run (another thread, a test) does. Tasks sent to
# Dask or Ray workers see none and stage in their own process, as they should.
_current: ContextVar[StagePool | None] = ContextVar("stage_pool", default=None)


@contextmanager
def processes(enabled: bool, workers: int | None = None,
              new_executor: Callable[[int], Executor] = spawn_executor) -> Iterator[StagePool | None]:
    """While open (and enabled), stage_files in this context runs batches in a pool it owns and shuts down."""
    if not enabled:
        yield None
        return
    pool = StagePool(workers or os.cpu_count() or 1, new_executor)
    token = _current.set(pool)
    try:
        yield pool
    finally:
        _current.reset(token)
        pool.shutdown()


def stage_files(batch: list, staging_dir: Path) -> list[stage.FileOutcome]:
    """flows.ingest.stage.stage_files, in a worker process when a pool is open (same result either way).

    A worker that dies (killed, out of memory) or cannot send its result back fails only the file
    that caused it: the batch is retried file by file, and a file that fails alone is rejected
    (WORKER_ERROR), so the refresh goes on.
    """
    pool = _current.get()
    if pool is None:
        return stage.stage_files(batch, staging_dir)
    try:
        return pool.run(batch, staging_dir)
    except OSError:
        raise
    except Exception as exc:  # noqa: BLE001 - the per-file error boundary around the worker
        if len(batch) == 1:
            landed, fmt, _ = batch[0]
            name = Path(landed.original_path).name
            return [stage.rejected(landed, fmt, "WORKER_ERROR",
                                   stage.crash("WORKER_ERROR", name, "the worker process staging it", exc).detail)]
    return [outcome for one in batch for outcome in stage_files([one], staging_dir)]

"""Keep interpreter shutdown quiet: DuckDB's nanobind bindings report 'leaks' while Python tears down."""
import atexit
import gc
import os
import sys

_installed = False


def _close_stderr_for_teardown() -> None:
    # Registered before Prefect is imported, so it runs after every other atexit handler (LIFO).
    # What follows is module teardown, where nanobind (DuckDB 2.0's bindings) prints
    # "nanobind: leaked N instances" for module-level objects freed late. That report is benign
    # (nanobind docs, refleaks) but reads like an error after a successful run.
    try:
        sys.stderr.flush()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
    except OSError:
        pass
    # Teardown's full collections would each walk every object still alive (~700k after a
    # refresh: 1.6-2 s of a 2-core machine's wall time, measured); frozen, they are skipped.
    # Every atexit handler has run by now; objects are still freed by reference counting.
    gc.freeze()


def install() -> None:
    """Silence stderr only for the final teardown, after all output and atexit work is done (once per process)."""
    global _installed
    if not _installed:
        _installed = True
        atexit.register(_close_stderr_for_teardown)


def dask_setup(worker) -> None:
    """Dask preload hook (distributed calls it as a worker starts): the worker's teardown is quiet too."""
    install()

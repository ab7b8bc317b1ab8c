"""Keep Python's cyclic garbage collector off the objects that imports create.

A refresh imports Prefect, great-expectations and dbt: ~700k long-lived objects (classes,
functions, schemas). While they are being created, each 25 % of growth triggers a full collection
over all of them (8 passes, ~1 s of a refresh on a 2-core machine), and every full collection after
that scans them again. None of them is garbage: imports run with the collector off, and what they
created is then frozen (gc.freeze: kept out of every later pass).
"""
import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def importing() -> Iterator[None]:
    """No cyclic collection while the block imports; what exists after it is frozen out of later passes."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()

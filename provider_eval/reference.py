"""Reference data (data/reference/*.csv) for Python code: one reader, and the conventions by name.

The warehouse loads the same files as ref.<stem> tables (flows/load.py, DuckDB's CSV reader); this is
the Python side's only way in, so a file's encoding, BOM and header are read one way everywhere.
"""
import csv
from decimal import Decimal
from functools import lru_cache
from pathlib import Path

from provider_eval.paths import REFERENCE_DIR  # the checkout's data/reference, or the installed package's


def rows(name: str, reference_dir: Path = REFERENCE_DIR) -> list[dict[str, str]]:
    """Every row of data/reference/<name> as a dict of strings (read now: callers cache what they derive)."""
    with (reference_dir / name).open(newline="", encoding="utf-8-sig") as fh:
        return list(csv.DictReader(fh))


@lru_cache(maxsize=1)
def _conventions() -> dict[str, tuple[Decimal, ...]]:
    """conventions.csv: name → its values, in file order (most conventions have one)."""
    out: dict[str, tuple[Decimal, ...]] = {}
    for row in rows("conventions.csv"):
        out[row["name"]] = out.get(row["name"], ()) + (Decimal(row["value"]),)
    return out


def conventions(name: str) -> tuple[Decimal, ...]:
    """Every value of one convention of data/reference/conventions.csv (e.g. the GPU counts it lists)."""
    try:
        return _conventions()[name]
    except KeyError:
        raise KeyError(f"data/reference/conventions.csv has no convention {name!r}") from None


def convention(name: str) -> Decimal:
    """The one value of a single-valued convention of data/reference/conventions.csv."""
    values = conventions(name)
    if len(values) != 1:
        raise ValueError(f"convention {name!r} has {len(values)} values in data/reference/conventions.csv, not one")
    return values[0]

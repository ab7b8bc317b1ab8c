"""What every format adapter is given and returns: the file's context, its parse result or its rejection."""
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import polars as pl

# Facts of the file a row came from, carried as columns: the rules and canonical columns of many files
# of one source then run as one polars query (most of a 5,000-row file's parse was per-query cost).
FILE_INDEX, SOURCE_FILE, FILE_SHA256, FILE_SEEN_AT = "_file_index", "_source_file", "_file_sha256", "_file_first_seen_at"


class FileRejected(Exception):
    """The whole file cannot be read (empty, truncated, wrong encoding, schema drift)."""

    def __init__(self, reason_code: str, detail: str):
        super().__init__(f"{reason_code}: {detail}")
        self.reason_code = reason_code
        self.detail = detail


@dataclass(frozen=True)
class FileContext:
    """What an adapter knows about the file it parses, besides its bytes."""

    path: Path
    source_name: str
    original_name: str
    file_sha256: str
    first_seen_at: str  # ISO-8601 UTC; the default observation time for rows without one
    defaults: dict
    # Where the file was found (the landing store renames it to its hash); data only, never opened.
    original_path: str = ""
    # Companion files landed with it (e.g. an MLPerf system JSON): original path → landed path.
    companions: dict = field(default_factory=dict)


@dataclass
class ParseResult:
    """Rows that parsed cleanly (canonical columns) and rows quarantined with reasons."""

    accepted: pl.DataFrame
    quarantined: pl.DataFrame
    rows_in: int
    # Detail tables that hang off accepted rows (e.g. per-request rows of a benchmark run):
    # canonical table name → frame. They are validated and loaded, but are not counted as rows in.
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Adapter:
    """A format id's reader: which kind of source, which canonical table, and the parse function."""

    format: str
    kind: str
    table: str
    parse: Callable[[FileContext], ParseResult]
    # Files that must be landed alongside a matched file so a refresh can be replayed from the
    # landing store alone (e.g. MLPerf's systems/<system>.json next to a results summary).
    companions: Callable[[Path], list[Path]] | None = None
    # Parses several files of one source (same defaults) at once: one result or FileRejected per file,
    # in order, each as `parse` would give it. For formats where per-file overhead dominates.
    parse_many: Callable[[list[FileContext]], list["ParseResult | FileRejected"]] | None = None
    # Files a source's glob may match that are not this format (e.g. vLLM's *.pytorch.json siblings).
    ignores: Callable[[Path], bool] | None = None

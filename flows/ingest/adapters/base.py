"""What every format adapter returns, and the rule machinery they share."""
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import polars as pl

QUARANTINE_COLUMNS = {
    "row_number": pl.Int64,
    "reason_code": pl.String,
    "detail": pl.String,
    "raw_record": pl.String,
}


class FileRejected(Exception):
    """The whole file cannot be read (empty, truncated, wrong encoding, schema drift)."""

    def __init__(self, reason_code: str, detail: str):
        super().__init__(f"{reason_code}: {detail}")
        self.reason_code = reason_code
        self.detail = detail


def read_utf8(path, original_name: str) -> str:
    """A file's text (a UTF-8 BOM dropped); an empty or non-UTF-8 file is rejected whole, with the reason."""
    data = path.read_bytes()
    if not data.strip():
        raise FileRejected("EMPTY", f"{original_name} is empty")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileRejected("ENCODING", f"not UTF-8: invalid byte at offset {exc.start}") from None


def physical_lines(text: str) -> list[str]:
    """The file's lines, split on '\\n' only (a CRLF's '\\r' dropped).

    Not str.splitlines(): that also splits on U+2028, U+2029, U+0085, \\v, \\f and \\x1c-\\x1e, which
    are valid inside a JSON string or a log value, and would cut one record into two.
    """
    return [line.removesuffix("\r") for line in text.split("\n")]


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


@dataclass(frozen=True)
class Rule:
    """A row-level rule: rows where `failed` is true are quarantined with `reason_code`."""

    reason_code: str
    failed: pl.Expr
    detail: pl.Expr


# Frames at least this tall evaluate each group of rules on the distinct values of the columns the
# rules read, and join the verdicts back: rules are row-wise, and a batch of scrape files repeats the
# same GPU names, units and timestamps thousands of times (320k quote rows: 1.2 → 0.7 CPU-s). On one
# small file the extra unique() and join cost more than they save.
DISTINCT_RULES_MIN_ROWS = 50_000
EXACT_KEY_TYPES = (pl.String, pl.Boolean, pl.Date)


def _rule_flags(frame: pl.DataFrame, rules: list[Rule]) -> pl.DataFrame:
    """frame with a boolean `__fail_<i>` column per rule (null counts as passing)."""
    flags = [r.failed.fill_null(False).alias(f"__fail_{i}") for i, r in enumerate(rules)]
    if frame.height < DISTINCT_RULES_MIN_ROWS:
        return frame.with_columns(flags)
    by_columns: dict[tuple[str, ...], list[pl.Expr]] = {}
    for rule, flag in zip(rules, flags):
        by_columns.setdefault(tuple(sorted(set(rule.failed.meta.root_names()))), []).append(flag)
    direct = []
    for columns, group in by_columns.items():
        # Only exact keys are joined on: float keys (NaN, -0.0) are evaluated row by row.
        exact = columns and all(frame.schema[c] in EXACT_KEY_TYPES or frame.schema[c].is_integer() for c in columns)
        distinct = frame.select(columns).unique() if exact else None
        if distinct is None or distinct.height * 4 > frame.height:
            direct += group
            continue
        frame = frame.join(distinct.with_columns(group), on=list(columns), how="left", nulls_equal=True,
                           maintain_order="left")
    return frame.with_columns(direct)


def apply_rules(frame: pl.DataFrame, rules: list[Rule], keep: list[str] = ()) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Split a frame into (accepted, quarantined); the first failing rule names the reason, all are listed.

    `keep` names columns copied into the quarantine rows as they are (e.g. which file a row came from).
    """
    if frame.height == 0:
        return frame, empty_quarantine({k: frame.schema[k] for k in keep})
    if len(set(frame.n_chunks("all"))) > 1:
        # Files concatenated with different columns leave columns chunked differently; polars 2.1
        # panics evaluating Python UDF rules (the name resolver, fields._per_name) over such a frame.
        frame = frame.rechunk()
    flagged = _rule_flags(frame, rules)
    details = [
        pl.when(pl.col(f"__fail_{i}")).then(pl.lit(f"{r.reason_code}: ") + r.detail).otherwise(None)
        for i, r in enumerate(rules)
    ]
    codes = [pl.when(pl.col(f"__fail_{i}")).then(pl.lit(r.reason_code)) for i, r in enumerate(rules)]
    failing = flagged.select(pl.any_horizontal([pl.col(f"__fail_{i}") for i in range(len(rules))])).to_series()
    helper = [c for c in flagged.columns if c.startswith("__")]
    good = flagged.drop(helper).filter(~failing)
    # Reasons are written for the failing rows only: polars computes every branch of a when/then
    # for every row, and ~45 formatted messages × every good row was most of a quote file's parse.
    # (Rules are row-wise, so a row's message does not depend on which other rows are present.)
    bad = flagged.filter(failing).with_columns(
        pl.coalesce(codes).alias("__reason_code"),
        pl.concat_str(details, separator="; ", ignore_nulls=True).alias("__detail"),
    )
    return good, quarantine_rows(bad, "__reason_code", "__detail", keep)


def quarantine_rows(bad: pl.DataFrame, code_col: str, detail_col: str, keep: list[str] = ()) -> pl.DataFrame:
    """Shape rejected rows as quarantine rows; the raw record is kept as JSON so nothing is lost."""
    raw_cols = [c for c in bad.columns if c.startswith("raw_")]
    raw = pl.struct([pl.col(c).alias(c.removeprefix("raw_")) for c in raw_cols]).struct.json_encode()
    return bad.select(
        pl.col("row_number").cast(pl.Int64),
        pl.col(code_col).alias("reason_code"),
        pl.col(detail_col).alias("detail"),
        raw.alias("raw_record"),
        *keep,
    )


def empty_quarantine(extra: dict | None = None) -> pl.DataFrame:
    """A quarantine frame with no rows and the right columns (plus `extra` name → dtype)."""
    return pl.DataFrame(schema={**QUARANTINE_COLUMNS, **(extra or {})})


# Caps checked before a file is parsed (bad-input catalogue #41-43). sources.yaml may set
# max_file_bytes and max_line_chars per source or under `settings:`.
DEFAULT_MAX_FILE_BYTES = 1024 * 2**20  # 1 GiB: far above any real quote, catalog or result file
DEFAULT_MAX_LINE_CHARS = 65_536  # a quote line is < 1 KB; Python's csv refuses fields over 131,072
MAX_NESTING = 64  # quote, catalog and result documents nest < 10 deep; the parsers recurse per level
# Formats parsed whole into Python objects (JSON, YAML, catalog CSVs, MLPerf summaries) take ~16x
# their size in memory (measured: one 200 MB JSON line peaked at 3.3 GB), so they have a lower
# default cap than max_file_bytes; a source that sets max_file_bytes sets this cap too.
DEFAULT_MAX_DOCUMENT_BYTES = 32 * 2**20  # real result, catalog and quote documents are < 5 MB
# One record of a line format (a JSON line, a log line) is parsed whole: the same reasoning, per line.
# A source's max_line_chars sets it (counted in bytes here: a character is at least one byte).
DEFAULT_MAX_RECORD_BYTES = 32 * 2**20
LINE_HEAD_CHARS = 200  # what an over-long line keeps for its quarantine row
QUARANTINE_DISTINCT_KEPT = 100  # per reason code and file: values stored in full before they are only counted
JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def check_file_size(ctx: FileContext) -> None:
    """Reject a file over the source's size cap before a byte of it is read."""
    cap = ctx.defaults.get("max_file_bytes") or DEFAULT_MAX_FILE_BYTES
    size = ctx.path.stat().st_size
    if size > cap:
        raise FileRejected("TOO_LARGE", f"{ctx.original_name} is {size:,} bytes; the source's max_file_bytes is "
                                        f"{cap:,} (sources.yaml)")


def check_document_size(ctx: FileContext, what: str) -> None:
    """Reject a file parsed whole (JSON, YAML, …) over the document cap, before a byte is read (memory)."""
    check_file_size(ctx)
    cap = ctx.defaults.get("max_file_bytes") or DEFAULT_MAX_DOCUMENT_BYTES
    size = ctx.path.stat().st_size
    if size > cap:
        raise FileRejected("TOO_LARGE", f"{ctx.original_name} is {size:,} bytes; a {what} is parsed whole, so it may "
                                        f"be at most {cap:,} bytes (sources.yaml max_file_bytes raises the cap)")


@dataclass(frozen=True)
class LongLine:
    """A line over the record cap: never held in memory, only its number, length and head."""

    number: int
    length_bytes: int
    head: str
    cap: int

    def detail(self) -> str:
        return (f"line {self.number} is {self.length_bytes:,} bytes, over the {self.cap:,}-byte line cap "
                f"(max_line_chars): not parsed; its first {LINE_HEAD_CHARS} characters are in raw_record")


def read_capped_lines(ctx: FileContext, chunk_bytes: int = 2**20) -> list:
    """The file's lines as physical_lines would give them, read in chunks: a line over the record cap
    is a LongLine (its bytes are skipped, never joined), so one huge line cannot exhaust memory.

    Empty and non-UTF-8 files are rejected as read_utf8 rejects them; a UTF-8 BOM is dropped."""
    check_file_size(ctx)
    cap = ctx.defaults.get("max_line_chars") or DEFAULT_MAX_RECORD_BYTES
    lines: list = []
    parts: list[bytes] = []  # the current line's bytes (only its head once it is over the cap)
    kept = length = line_start = offset = 0
    blank = True

    def finish() -> None:
        number, data = len(lines) + 1, b"".join(parts)
        if length > cap:
            head = data[:LINE_HEAD_CHARS * 4].decode("utf-8", "replace")[:LINE_HEAD_CHARS]
            lines.append(LongLine(number, length, head, cap))
            return
        start = line_start
        if number == 1 and data.startswith(b"\xef\xbb\xbf"):
            data, start = data[3:], start + 3
        try:
            lines.append(data.decode("utf-8").removesuffix("\r"))
        except UnicodeDecodeError as exc:
            raise FileRejected("ENCODING", f"not UTF-8: invalid byte at offset {start + exc.start}") from None

    with open(ctx.path, "rb") as fh:
        while chunk := fh.read(chunk_bytes):
            blank = blank and not chunk.strip()
            pieces = chunk.split(b"\n")
            for i, piece in enumerate(pieces):
                length += len(piece)
                if length <= cap or kept < LINE_HEAD_CHARS * 4:
                    parts.append(piece)
                    kept += len(piece)
                if length > cap and kept > LINE_HEAD_CHARS * 4:  # over the cap: keep the head only
                    parts = [b"".join(parts)[:LINE_HEAD_CHARS * 4]]
                    kept = len(parts[0])
                if i < len(pieces) - 1:  # a newline ends the line
                    finish()
                    offset += len(piece) + 1
                    line_start, parts, kept, length = offset, [], 0, 0
                else:
                    offset += len(piece)
    finish()
    if blank:
        raise FileRejected("EMPTY", f"{ctx.original_name} is empty")
    return lines


def max_line_chars(ctx: FileContext) -> int:
    """The longest line this source's files may have."""
    return ctx.defaults.get("max_line_chars") or DEFAULT_MAX_LINE_CHARS


def check_json_nesting(text: str, original_name: str) -> None:
    """Reject JSON nested deeper than MAX_NESTING before parsing (the parser recurses per level)."""
    if text.count("[") + text.count("{") <= MAX_NESTING:  # too few brackets to nest that deep: no scan
        return
    depth = deepest = 0
    for char in re.findall(r"[\[\]{}]", JSON_STRING.sub("", text)):
        depth += 1 if char in "[{" else -1
        if depth > deepest:
            deepest = depth
            if deepest > MAX_NESTING:
                raise FileRejected("NESTING_TOO_DEEP", f"{original_name} nests more than {MAX_NESTING} levels deep")


def bound_quarantine(quarantined: pl.DataFrame, kept: int = QUARANTINE_DISTINCT_KEPT) -> pl.DataFrame:
    """Keep every quarantined row, but only the first `kept` distinct details per reason in full.

    A file with a million distinct unknown GPU names still gets one quarantine row per input row
    (rows in = accepted + quarantined holds), but later rows carry a short detail and no raw record:
    their bytes stay in the landing store, findable by file and row number.
    """
    if quarantined.height == 0:
        return quarantined
    first_seen = pl.col("row_number").min().over("reason_code", "detail")
    # Distinct details in order of first appearance, per reason.
    order = first_seen.rank("dense").over("reason_code")
    over = quarantined.with_columns(order.alias("__order"))
    capped = pl.col("__order") > kept
    return over.with_columns(
        pl.when(capped).then(pl.format(
            "{}: value not stored: more than {} distinct {} values in this file (the row is in the landed file at row {})",
            pl.col("reason_code"), pl.lit(kept), pl.col("reason_code"), pl.col("row_number")))
        .otherwise(pl.col("detail")).alias("detail"),
        pl.when(capped).then(None).otherwise(pl.col("raw_record")).alias("raw_record"),
    ).drop("__order")

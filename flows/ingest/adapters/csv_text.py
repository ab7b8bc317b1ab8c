"""Read a CSV file as text cells by header name: no type guessing, whole-file problems named."""
import csv
import io
import json

import polars as pl

from flows.ingest.adapters.base import FileContext, FileRejected
from flows.ingest.adapters.file_limits import check_file_size, max_line_chars, read_utf8

ASCII_SPACE = " \t\r\n"
# Stands in for a line over the cap so the csv reader never holds it; names the line and its length.
TOO_LONG_MARKER = "__provider_eval_line_too_long__"


def read_csv_text(ctx: FileContext, required: set[str], optional: set[str]) -> pl.DataFrame:
    """Columns become `raw_<name>` (stripped text, empty → null) plus a 1-based `row_number`."""
    check_file_size(ctx)
    data = read_utf8(ctx.path, ctx.original_name).encode("utf-8")
    try:
        # infer_schema=False: every cell stays text, so a late '1.5' in an int column is a row
        # problem we can name, not a schema the reader guessed from the first rows.
        frame = pl.read_csv(data, infer_schema=False, raise_if_empty=False)
    except pl.exceptions.PolarsError as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FileRejected("CSV_MALFORMED", first_line) from None
    header = [c.strip().lstrip("\ufeff") for c in frame.columns]
    frame.columns = header
    _check_header(header, required, optional)
    cells = [
        pl.col(c).str.strip_chars(ASCII_SPACE).replace("", None).alias(f"raw_{c}")
        for c in sorted(required | optional) if c in header
    ]
    absent = [pl.lit(None, pl.String).alias(f"raw_{c}") for c in sorted(optional - set(header))]
    return frame.select(cells + absent).with_row_index("row_number", offset=1).with_columns(
        pl.col("row_number").cast(pl.Int64)
    )


def _check_header(header: list[str], required: set[str], optional: set[str]) -> None:
    """Reject the file when its columns are not the format's (the schema drifted)."""
    missing = required - set(header)
    unknown = set(header) - required - optional
    if missing or unknown:
        parts = []
        if missing:
            parts.append(f"missing column(s) {sorted(missing)}")
        if unknown:
            parts.append(f"unknown column(s) {sorted(unknown)}")
        if len(header) == 1 and any(d in header[0] for d in ";\t|"):
            parts.append("the header looks delimited by something other than ','")
        raise FileRejected("SCHEMA_DRIFT", "; ".join(parts))
    if len(set(header)) != len(header):
        raise FileRejected("SCHEMA_DRIFT", "a column name appears twice in the header")


def read_csv_rows(ctx: FileContext, required: set[str], optional: set[str]) -> pl.DataFrame:
    """Like read_csv_text, but a row with too few or too many fields is kept and named, not fatal.

    Adds `row_shape_problem` (null when the row has exactly the header's field count). Blank lines
    are not rows. Cells are stripped of ASCII whitespace only: a no-break space or zero-width
    character stays in the cell so a look-alike name can never match a real one.
    """
    check_file_size(ctx)
    text = _cap_lines(read_utf8(ctx.path, ctx.original_name), max_line_chars(ctx))
    # An over-long line becomes a quoted marker record, so such a file never takes the polars path.
    plain = _plain_rows(text.removeprefix("\ufeff"), required, optional)
    if plain is not None:
        return plain
    return _csv_module_rows(ctx, text, required, optional)


def _csv_module_rows(ctx: FileContext, text: str, required: set[str], optional: set[str]) -> pl.DataFrame:
    """read_csv_rows' frame read record by record with the csv module (quotes, ragged rows, odd lines)."""
    # The csv module (not a sniffing reader) so each record's own field count is known.
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""), strict=True)
    try:
        records = [r for r in reader if r]
    except csv.Error as exc:
        raise FileRejected("CSV_MALFORMED", f"line {reader.line_num}: {exc}") from None
    if not records:
        raise FileRejected("EMPTY", f"{ctx.original_name} has no header")
    if records[0][0].startswith(TOO_LONG_MARKER):
        raise FileRejected("LINE_TOO_LONG", f"the header line is {records[0][0].split(':')[2]} characters "
                                            f"(max_line_chars {max_line_chars(ctx):,})")
    header = [c.strip(ASCII_SPACE) for c in records[0]]
    _check_header(header, required, optional)
    width = len(header)
    body = records[1:]
    too_long = [_too_long_detail(r, max_line_chars(ctx)) for r in body]
    # An over-long line's record is only its marker: no cells, the head of the line kept aside.
    heads = [r[0].split(":", 3)[3] if long else None for r, long in zip(body, too_long)]
    body = [[] if long else r for r, long in zip(body, too_long)]
    columns = {
        f"raw_{name}": [(r[i].strip(ASCII_SPACE) or None) if i < len(r) else None for r in body]
        for i, name in enumerate(header)
    }
    shape = [
        None if len(r) == width or long else f"{len(r)} field(s) where the header has {width}"
        for r, long in zip(body, too_long)
    ]
    # Fields beyond the header's width are kept (as JSON) in the raw record, never dropped.
    columns["raw__extra_fields"] = [json.dumps(r[width:]) if len(r) > width else None for r in body]
    columns["raw__line_head"] = heads
    frame = pl.DataFrame({**columns, "row_shape_problem": shape, "row_too_long": too_long},
                         schema={**{c: pl.String for c in columns}, "row_shape_problem": pl.String,
                                 "row_too_long": pl.String})
    absent = [pl.lit(None, pl.String).alias(f"raw_{c}") for c in sorted(optional - set(header))]
    return frame.with_columns(absent).with_row_index("row_number", offset=1).with_columns(
        pl.col("row_number").cast(pl.Int64)
    )


def _cap_lines(text: str, cap: int) -> str:
    """Replace each physical line over `cap` characters by a one-field marker record (#41).

    The record keeps the line number, its length and its first 200 characters, so the row is
    quarantined as LINE_TOO_LONG with a readable excerpt and the rest of the file still loads.
    """
    lines = text.split("\n")
    if max(map(len, lines)) <= cap:
        return text
    out = []
    for number, line in enumerate(lines, start=1):
        if len(line) > cap:
            head = line[:200].replace('"', "'").replace("\r", " ")
            line = '"' + f"{TOO_LONG_MARKER}:{number}:{len(line)}:{head}" + '"'
        out.append(line)
    return "\n".join(out)


def _too_long_detail(record: list[str], cap: int) -> str | None:
    """The LINE_TOO_LONG message for a marker record, else None."""
    if len(record) != 1 or not record[0].startswith(TOO_LONG_MARKER):
        return None
    _, number, length, _ = record[0].split(":", 3)
    return f"line {number} is {int(length):,} characters, over max_line_chars {cap:,}; its first 200 are in raw_record"


def _plain_rows(text: str, required: set[str], optional: set[str]) -> pl.DataFrame | None:
    """read_csv_rows' frame built in polars, for files where the csv module could do nothing but split on ','.

    Only when no record can read differently: no quote, carriage return or NUL anywhere, no blank line,
    and every line has the header's field count (so no row is ragged). Otherwise None, and the csv
    module reads the file (a 5,000-row file: ~40 ms there, ~2 ms here).
    """
    if '"' in text or "\r" in text or "\x00" in text or text.startswith("\n"):
        return None
    text = text.rstrip("\n")  # blank lines at the end are no records (the csv module skips them too)
    header_line = text.split("\n", 1)[0]
    header = [c.strip(ASCII_SPACE) for c in header_line.split(",")]
    width = len(header)
    if width < 2 or "\n" not in text:
        return None
    _check_header(header, required, optional)
    try:
        # quote_char=None: no quote exists here, so every ',' splits. A line with more fields raises.
        fields = pl.read_csv(text.encode("utf-8"), has_header=True, infer_schema=False, quote_char=None,
                             new_columns=[f"field_{i}" for i in range(width)], raise_if_empty=False)
    except pl.exceptions.PolarsError:
        return None
    # polars pads a short line (or a blank one) with nulls: the ',' count proves every line is whole.
    if text.count(",") != (fields.height + 1) * (width - 1):
        return None
    cells = [
        pl.col(f"field_{i}").str.strip_chars(ASCII_SPACE).replace("", None).alias(f"raw_{name}")
        for i, name in enumerate(header)
    ]
    frame = fields.select(*cells, *[pl.lit(None, pl.String).alias(c) for c in (
        "raw__extra_fields", "raw__line_head", "row_shape_problem", "row_too_long")])
    absent = [pl.lit(None, pl.String).alias(f"raw_{c}") for c in sorted(optional - set(header))]
    return frame.with_columns(absent).with_row_index("row_number", offset=1).with_columns(
        pl.col("row_number").cast(pl.Int64)
    )

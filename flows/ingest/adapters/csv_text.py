"""Read a CSV file as text cells by header name: no type guessing, whole-file problems named."""
import polars as pl

from flows.ingest.adapters.base import FileContext, FileRejected


def read_csv_text(ctx: FileContext, required: set[str], optional: set[str]) -> pl.DataFrame:
    """Columns become `raw_<name>` (stripped text, empty → null) plus a 1-based `row_number`."""
    data = ctx.path.read_bytes()
    if not data.strip():
        raise FileRejected("EMPTY", f"{ctx.original_name} is empty")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileRejected("ENCODING", f"not UTF-8: invalid byte at offset {exc.start}") from None
    try:
        # infer_schema=False: every cell stays text, so a late '1.5' in an int column is a row
        # problem we can name, not a schema the reader guessed from the first rows.
        frame = pl.read_csv(data, infer_schema=False, raise_if_empty=False)
    except pl.exceptions.PolarsError as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FileRejected("CSV_MALFORMED", first_line) from None
    header = [c.strip().lstrip("\ufeff") for c in frame.columns]
    frame.columns = header
    missing = required - set(header)
    unknown = set(header) - required - optional
    if missing or unknown:
        parts = []
        if missing:
            parts.append(f"missing column(s) {sorted(missing)}")
        if unknown:
            parts.append(f"unknown column(s) {sorted(unknown)}")
        raise FileRejected("SCHEMA_DRIFT", "; ".join(parts))
    if len(set(header)) != len(header):
        raise FileRejected("SCHEMA_DRIFT", "a column name appears twice in the header")
    cells = [
        pl.col(c).str.strip_chars().replace("", None).alias(f"raw_{c}")
        for c in sorted(required | optional) if c in header
    ]
    absent = [pl.lit(None, pl.String).alias(f"raw_{c}") for c in sorted(optional - set(header))]
    return frame.select(cells + absent).with_row_index("row_number", offset=1).with_columns(
        pl.col("row_number").cast(pl.Int64)
    )

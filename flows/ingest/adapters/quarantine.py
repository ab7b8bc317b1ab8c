"""Quarantine rows: their columns, their shape from rejected rows, and how much of each is stored."""
import polars as pl

QUARANTINE_COLUMNS = {
    "row_number": pl.Int64,
    "reason_code": pl.String,
    "detail": pl.String,
    "raw_record": pl.String,
}
QUARANTINE_DISTINCT_KEPT = 100  # per reason code and file: values stored in full before they are only counted


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

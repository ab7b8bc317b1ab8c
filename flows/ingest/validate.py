"""Check a canonical frame against its pandera contract; failing rows go to quarantine with reasons."""
import pandera.polars as pa
import polars as pl

from flows.ingest.adapters.base import empty_quarantine


def validate_frame(frame: pl.DataFrame, contract: type[pa.DataFrameModel]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Return (rows that satisfy the contract, quarantine rows naming column, check and value)."""
    try:
        contract.validate(frame, lazy=True)
        return frame, empty_quarantine()
    except pa.errors.SchemaErrors as exc:
        cases = exc.failure_cases
    row_cases = cases.filter(pl.col("index").is_not_null())
    if row_cases.height < cases.filter(pl.col("schema_context") != "DataFrameSchema").height or (
        cases.filter(pl.col("index").is_null()).height
    ):
        # A failure with no row index is a schema problem (missing column, wrong dtype): that is an
        # adapter bug, not bad input, and must not be hidden in quarantine.
        raise ValueError(f"{contract.__name__}: frame does not match its contract:\n{cases}")
    reasons = row_cases.group_by("index").agg(
        pl.format("{}: {} failed for '{}'", pl.col("column"), pl.col("check"), pl.col("failure_case"))
        .str.join("; ").alias("detail")
    )
    indexed = frame.with_row_index("__index").with_columns(pl.col("__index").cast(pl.Int32))
    bad = indexed.join(reasons, left_on="__index", right_on="index", how="inner")
    good = indexed.join(reasons, left_on="__index", right_on="index", how="anti").drop("__index")
    quarantined = bad.select(
        pl.col("row_number").cast(pl.Int64),
        pl.lit("CONTRACT_VIOLATION").alias("reason_code"),
        pl.col("detail"),
        pl.struct(pl.exclude("__index", "detail")).struct.json_encode().alias("raw_record"),
    )
    return good, quarantined

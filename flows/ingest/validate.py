"""Check a canonical frame against its pandera contract; failing rows go to quarantine with reasons."""
import pandera.polars as pa
import polars as pl

from flows.ingest.adapters.quarantine import empty_quarantine
from models.plausibility import IMPLAUSIBLE
from provider_eval import progress


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
        .str.join("; ").alias("detail"),
        # Only plausibility checks failed (models/plausibility.py): a physically impossible value.
        pl.col("check").str.starts_with(IMPLAUSIBLE).all().alias("implausible"),
    )
    indexed = frame.with_row_index("__index").with_columns(pl.col("__index").cast(pl.Int32))
    bad = indexed.join(reasons, left_on="__index", right_on="index", how="inner")
    good = indexed.join(reasons, left_on="__index", right_on="index", how="anti").drop("__index")
    quarantined = bad.select(
        pl.col("row_number").cast(pl.Int64),
        pl.when("implausible").then(pl.lit(IMPLAUSIBLE)).otherwise(pl.lit("CONTRACT_VIOLATION")).alias("reason_code"),
        pl.col("detail"),
        pl.struct(pl.exclude("__index", "detail", "implausible")).struct.json_encode().alias("raw_record"),
    )
    return good, quarantined


@progress.timed("validate")
def validate_frames(frames: list[pl.DataFrame],
                    contract: type[pa.DataFrameModel]) -> list[tuple[pl.DataFrame, pl.DataFrame]]:
    """validate_frame for many frames of one table, paying pandera's per-call cost once.

    The contract is checked on all the frames together; the usual case (every row passes) ends
    there. If anything fails, or the frames do not stack, each frame is checked on its own so
    the quarantine rows and errors are exactly those of validate_frame. Uniqueness keys include
    file_sha256, so checking files together finds no duplicate that checking them apart would not.
    """
    if len(frames) > 1:
        try:
            contract.validate(pl.concat(frames, how="vertical"), lazy=True)
            return [(frame, empty_quarantine()) for frame in frames]
        except (pa.errors.SchemaErrors, pl.exceptions.PolarsError):
            pass
    return [validate_frame(frame, contract) for frame in frames]


@progress.timed("validate")
def validate_details(frames: list[pl.DataFrame], contract: type[pa.DataFrameModel]) -> None:
    """Detail rows (e.g. per-request) must pass their contract: checked together, a failure re-raised per frame."""
    try:
        contract.validate(pl.concat(frames, how="vertical"), lazy=True)
    except (pa.errors.SchemaErrors, pl.exceptions.PolarsError):
        for frame in frames:  # the failing file's own error, as checking it alone would raise
            contract.validate(frame, lazy=True)
